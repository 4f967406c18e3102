/*
 * integer.c - quantized contractions become integer kernels.
 *
 * PT2E writes a quantized linear layer (or convolution) as float
 * arithmetic between quantizations:
 *
 *     xq = quantize_per_tensor(x, sa, za)       int8 or uint8
 *     w  = dequantize_per_channel(wq, sb)       folded (fold_constants)
 *     y  = linear(dequantize_per_tensor(xq, sa, za), w, bias)
 *
 * and a dynamic quantization the same with sa, za chosen at run time
 * (choose_qparams). This pass finds each GEMM (or convolution) whose A
 * (input) is such a per-tensor dequantization of an int8 or uint8 tensor
 * and whose constant B (weight) is a folded dequantization in the integer
 * kernel's form (int8, one scale per column or output channel, no zero
 * point: ir/expand/linalg.c, gemm_int_weights, conv_int_weights), and lets
 * it read the integers instead:
 *
 *     A        a view of xq with A's shape, strides and offset
 *     a_scale  sa, a number, or in[3], a run-time scalar tensor
 *     a_zp     za, a number, or in[4]
 *     int8     1: the expansion's integer kernel (int32 sums of int8
 *              products, rescaled once per output: linalg.c, gemm_int)
 *
 * The dequantization then has no reader and the late dce drops it. Each
 * GEMM rewritten is marked an integer kernel in Sdfg.qsteps (the compile's
 * note, doccc check, --report). The results are eager's up to one float
 * rounding of each output sum (test_quant's tolerance): the int32 sums are
 * exact where eager rounds its float partial sums.
 *
 * A convolution whose outputs each sum fewer than conv_min_reduction
 * products stays in float (MobileNet's pointwise layers with few input channels:
 * the float kernel vectorized along the pixels stores whole vectors, where
 * the integer one's epilogue scatters). A convolution's input must be
 * quantized with numbers (static PT2E): its
 * padding is the zero point. Depthwise, grouped and transposed
 * convolutions stay in float; the compile's note names them. On the GPU
 * targets the kernels multiply int8 by int8 (a uint8 input shifted into
 * int8 with its zero point), which gpu_plan gives the int8 tensor cores
 * where the architecture has them and int32 sums elsewhere (rocm).
 */
#include <string.h>

#include "../ir.h"
#include "../ops.h"
#include "../expand/expand.h"

/* The library node that writes container c's storage (a top-level child),
 * or NULL. */
static LibNode *producer(Sdfg *g, int c)
{
	int root = sdfg_root_of(g, c);
	for (int i = 0; i < g->root->nkids; i++) {
		LibNode *l = g->root->kids[i]->lib;
		for (int j = 0; l && j < l->nout; j++)
			if (l->out[j] >= 0 && sdfg_root_of(g, l->out[j]) == root)
				return l;
	}
	return NULL;
}

/* Do containers a and b lay out the same shape the same way? */
static int same_layout(Sdfg *g, int a, int b)
{
	Container *x = sdfg_c(g, a), *y = sdfg_c(g, b);
	if (x->rank != y->rank)
		return 0;
	for (int d = 0; d < x->rank; d++)
		if (!ex_eq(x->shape[d], y->shape[d]) || !ex_eq(x->stride[d], y->stride[d]))
			return 0;
	return x->offset && y->offset ? ex_eq(x->offset, y->offset) : !x->offset == !y->offset;
}

/* The per-tensor dequantization of an int8/uint8 tensor that A reads
 * element for element, or NULL. */
static LibNode *dequant_of(Sdfg *g, int A)
{
	LibNode *q = producer(g, A);
	if (!q || q->op != LIB_QUANT || !lib_int(q, "dq", 0) || lib_int(q, "form", -1) != QF_TENSOR)
		return NULL;
	int x = q->in[0], y = q->out[0];
	Dtype xd = sdfg_c(g, x)->dt;
	if ((xd != DT_I8 && xd != DT_U8) || sdfg_c(g, y)->dt != DT_F32 || !same_layout(g, x, y))
		return NULL;
	/* A reads y's storage: the same offsets in x's */
	if (sdfg_root_of(g, x) != x && !same_layout(g, x, sdfg_root_of(g, x)))
		return NULL;
	if (sdfg_root_of(g, y) != y && !same_layout(g, y, sdfg_root_of(g, y)))
		return NULL;
	return q;
}

/* The products each output of convolution l sums (input channels x taps
 * per group); -1 if not constant. */
static int64_t conv_reduction(Sdfg *g, const LibNode *l)
{
	Container *w = sdfg_c(g, l->in[1]);
	int64_t k = 1, v;
	for (int d = 1; d < w->rank; d++) /* [OC][C/G][taps...] */
		if (ex_isint(w->shape[d], &v))
			k *= v;
		else
			return -1;
	return k;
}

static void mark_integer(Sdfg *g, const char *label)
{
	for (int i = 0; i < g->nqsteps; i++)
		if (g->qsteps[i].node == label || !strcmp(g->qsteps[i].node, label))
			g->qsteps[i].integer = 1;
}

int pass_integer(PassCtx *c)
{
	Sdfg *g = c->g;
	for (int i = 0; i < g->root->nkids; i++) {
		Node *k = g->root->kids[i];
		LibNode *l = k->lib;
		if (!l || (l->op != LIB_GEMM && l->op != LIB_CONV) || l->nin > 3 || sdfg_c(g, l->in[0])->dt != DT_F32 ||
		    sdfg_c(g, l->out[0])->dt != DT_F32 || (l->in[2] >= 0 && sdfg_c(g, l->in[2])->dt != DT_F32))
			continue;
		LibNode *q = dequant_of(g, l->in[0]);
		/* a convolution pads with the zero point: a number */
		if (!q || (l->op == LIB_GEMM ? !gemm_int_weights(g, l) : q->in[2] >= 0 || q->in[1] >= 0 || !conv_int_weights(g, l)))
			continue;
		if (q->in[2] < 0 && !int_zp_ok(lib_float(q, "zp", 0)))
			continue;
		if (l->op == LIB_CONV && conv_reduction(g, l) < pass_int(c, "conv_min_reduction"))
			continue;
		Container *a = sdfg_c(g, l->in[0]);
		int x = sdfg_root_of(g, q->in[0]);
		int av = sdfg_add_view(g, arena_printf(g->arena, "%s_q", a->name), x, a->rank, a->shape, a->stride, a->offset);
		sdfg_c(g, av)->origin = "";
		l->in[0] = av;
		l->in[3] = q->in[1];
		l->in[4] = q->in[2];
		l->nin = 5;
		lib_set_int(g, l, "int8", 1);
		if (q->in[1] < 0)
			lib_set_float(g, l, "a_scale", lib_float(q, "scale", 1));
		if (q->in[2] < 0)
			lib_set_float(g, l, "a_zp", lib_float(q, "zp", 0));
		mark_integer(g, k->label);
	}
	return 0;
}
