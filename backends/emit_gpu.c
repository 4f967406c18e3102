/*
 * emit_gpu.c - the GPU printer: one CUDA source for targets cuda and rocm
 * (HIP through doccc_gpu.h's name mapping) and for their simulation.
 *
 * Every step (a top-level child, emit.c) is a host function that launches
 * kernels on the run's stream; the walker calls this printer for each loop
 * and block of the step:
 *
 *   - a map nest the schedule pass marked SCHED_GPU_THREAD (collapse k)
 *     becomes one kernel over the collapsed iteration space: each thread
 *     takes iterations dc_t = blockIdx.x * blockDim.x + threadIdx.x, then
 *     every gridDim.x * blockDim.x further (a grid-stride loop), recovers
 *     the k loop variables from dc_t and runs the body as scalar code;
 *     the grid is min(ceil(iterations / block), the category's cap);
 *   - such a nest that is a contraction (acc += X * Y: GEMM, batched
 *     matmul, convolution) runs as shared-memory tiles (below);
 *   - such a nest with few iterations and long inner loops runs one thread
 *     block per iteration instead (block-cooperative kernels, below);
 *   - a step-level nest that only accumulates into one small global
 *     container (a whole-tensor sum or max) runs as one cooperative block;
 *   - an N_FOR at step level whose body holds such nests (a recurrent
 *     layer's time loop, schedule.c) is a host loop: its children become
 *     kernels launched every iteration, which take the loop's variable as
 *     a by-value parameter;
 *   - anything else at step level (an N_FOR, a block, a map that was not
 *     collapsed) becomes a kernel of one thread: correct, not fast;
 *   - inside kernels, loops are plain for loops (#pragma unroll for
 *     SCHED_UNROLL) and blocks the walker's tasklets.
 *
 * Kernels take restrict pointers into device memory (workspace, weights,
 * inputs, outputs, all device-resident) and nothing else but the
 * variables of the host loops around them, so steps of
 * repeated layers share their text exactly as on the CPU. The index and
 * division checks set a device error flag (the first status wins, by
 * atomicCAS) and end the thread; forward goes on, since every access is
 * checked, and the run reads the flag when it synchronizes.
 *
 * The host API (create, run, run_host, set_stream, sync, last_error,
 * set_log, ...) is C++ with C linkage through NAME.h; every runtime call is
 * checked and turns into DOCCC_ERR_DEVICE with the runtime's message.
 *
 * Launch-free replay: a run is its kernels and, last, an async copy of the
 * device status flag into a pinned host word, which the run's end reads
 * after synchronizing (clearing the device flag only when it was set).
 * From the second run on, that sequence is captured once per set of
 * input/output pointers (the weights, workspace and flag never move) as a
 * CUDA/HIP graph and replayed with one cudaGraphLaunch; up to DC_GRAPHS
 * executable graphs are kept, the least recently used one re-captured and
 * updated in place (cudaGraphExecUpdate) or re-instantiated when the
 * pointers are new. The first run is eager so that a model run once pays
 * no capture and instantiation, and the kernels' modules are loaded before
 * any capture (lazy loading). Capture is illegal on the legacy stream and,
 * on a blocking stream, would make other threads' legacy-stream work fail
 * (cudaErrorStreamCaptureImplicit), so create makes a non-blocking stream
 * of the model's own: every capture happens there, in ThreadLocal mode
 * (other threads may allocate and copy meanwhile), and the graph is
 * launched on the run's stream, the caller's or the model's. A run without
 * a caller's stream is ordered after earlier legacy-stream work by an
 * event, as it was on the legacy stream. A run on a caller's stream that
 * is itself capturing launches eagerly into that capture.
 * DOCCC_GPU_GRAPHS=0 at create turns all of it off: eager launches on the
 * legacy stream.
 */
#include <string.h>

#include "emit.h"

static const char *gpu_fail(Em *e, const char *code)
{
	return arena_printf(e->g->arena, "{ atomicCAS(dc_err, 0, %s); return; }", code);
}

static void gpu_step_begin(Em *e, int check)
{
	(void)check;
	emit_line(e, "(void)dc_stream; (void)dc_err;");
}

static Expr *extent(Sdfg *g, Node *m)
{
	return ex_div(g, ex_addi(g, ex_sub(g, m->hi, m->lo), m->step - 1), ex_int(g, m->step));
}

/* The parameters of a kernel for subtree n (restrict pointers to the
 * containers it touches, the error flag if it checks) and the arguments of
 * its launch (", v_0, v_1"). */
static void kernel_params(Em *e, Node *n, Buf *params, Buf *args)
{
	Sdfg *g = e->g;
	unsigned char *set = arena_alloc(g->arena, (size_t)g->ncs + 1);
	emit_touched(g, n, set);
	for (int c = 0; c < g->ncs; c++) {
		Container *ct = &g->cs[c];
		if (!set[c] || ct->kind == CK_LOCAL)
			continue;
		int ro = ct->kind == CK_INPUT || ct->kind == CK_CONST;
		buf_printf(params, "%s%s%s *restrict v_%s", params->len ? ", " : "", ro ? "const " : "", emit_storage_type[ct->dt],
		           e->cn[c]);
		buf_printf(args, ", v_%s", e->cn[c]);
	}
	if (emit_has_check(n)) {
		buf_printf(params, "%sint *dc_err", params->len ? ", " : "");
		buf_puts(args, ", dc_err");
	}
	/* the run-time dims and the variables of the host loops around the launch, by value */
	for (int k = 0; k < g->ndims; k++) {
		buf_printf(params, "%sconst int64_t dc_d%d", params->len ? ", " : "", k);
		buf_printf(args, ", dc_d%d", k);
	}
	for (Node *p = n->parent; p; p = p->parent)
		if (p->kind == N_FOR) {
			const char *v = e->sn[p->var];
			buf_printf(params, "%sconst int64_t %s", params->len ? ", " : "", v);
			buf_printf(args, ", %s", v);
		}
}

/* The host loops around kernel n, whose variables it takes: (void) them,
 * for the kernels that do not use them. */
static void host_vars_used(Em *e, Node *n)
{
	for (Node *p = n->parent; p; p = p->parent)
		if (p->kind == N_FOR)
			emit_line(e, "(void)%s;", e->sn[p->var]);
}

/* The kernel function's frame: its text goes to e->kern, printed with
 * e->inkern set; kernel_close returns to where the launch is printed. */
typedef struct {
	Buf *b;
	int ind;
} KFrame;

static KFrame kernel_open(Em *e, int id, const Buf *params)
{
	KFrame f = {e->b, e->ind};
	e->b = e->kern;
	e->ind = 0;
	e->inkern = 1;
	emit_line(e, "__global__ void %s_k%d(%s)", e->nm, id, params->len ? params->s : "");
	emit_line(e, "{");
	e->ind++;
	return f;
}

static void kernel_close(Em *e, KFrame f)
{
	e->ind--;
	emit_line(e, "}\n");
	e->b = f.b;
	e->ind = f.ind;
	e->inkern = 0;
}

/* ---- block-cooperative kernels ---------------------------------------------------
 *
 * A grid of few iterations, each with long inner loops (a layer norm or
 * softmax over rows, a GEMV at batch 1, a global sum), leaves most of a
 * GPU idle when one thread takes an iteration. Such a nest runs as one
 * thread block per iteration instead: the children of the innermost
 * collapsed map's body are classified, in order,
 *
 *   split       an N_MAP that stores only to global memory without wcr
 *               (and to locals of its own): its iterations are dealt out
 *               to the block's threads, then a barrier;
 *   reduce      an N_MAP or N_FOR whose only stores outside its own locals
 *               are reductions into locals of the row (wcr +=, *=, max=,
 *               min=, or the read-modify-write "l = l op x" of a scalar
 *               accumulator that nothing else in the loop reads), float32,
 *               float64 or int64: every thread reduces its share of the
 *               iterations from the identity, then a shared-memory tree
 *               combines the partials and every thread adds them to the
 *               value from before the loop;
 *   redundant   anything else without wcr into global memory: every thread
 *               runs it in full and computes the same values (the row's
 *               scalar code between the loops);
 *
 * and a child with wcr into global memory keeps the one-thread-per-
 * iteration kernel. The barriers are uniform: every thread of a block
 * walks the same iterations. Reassociating a floating-point reduction
 * changes its rounding a little; 16-bit accumulators, which round at every
 * step, are left alone.
 */
enum { C_REDUNDANT, C_SPLIT, C_REDUCE };
enum { MAXRED = 16 };

typedef struct {
	Node **maps;
	int depth;
	int kind[64];             /* per child of the row body */
	Node *kid[64];
	int nkids;
	int red[MAXRED];          /* reduced row locals, their op, for the child being classified */
	Wcr op[MAXRED];
	int nred;
	int kred[64][MAXRED];     /* the same, kept per C_REDUCE child by coop_plan */
	Wcr kop[64][MAXRED];
	int knred[64];
} Coop;

static int row_local(Sdfg *g, int c, Node *const *maps, int depth)
{
	Container *ct = sdfg_c(g, c);
	for (int i = 0; i < depth && ct->kind == CK_LOCAL; i++)
		if (ct->owner == maps[i]->id)
			return 1;
	return 0;
}

static Wcr rmw_op(TCode c)
{
	return c == T_ADD ? W_SUM : c == T_MUL ? W_PROD : c == T_MAX ? W_MAX : c == T_MIN ? W_MIN : W_NONE;
}

/* Reads of the memory of container c (through any view) in subtree n. */
static int count_reads(Sdfg *g, const Node *n, int c)
{
	int k = 0;
	if (n->kind == N_SEQ)
		for (int i = 0; i < n->nkids; i++)
			k += count_reads(g, n->kids[i], c);
	else if (n->kind != N_BLOCK)
		k = count_reads(g, n->body, c);
	else
		for (int i = 0; i < n->nts && !n->lib; i++)
			for (int j = 0; j < n->ts[i].nin; j++)
				k += n->ts[i].in[j].kind == OPD_MEM && sdfg_root_of(g, n->ts[i].in[j].m.data) == sdfg_root_of(g, c);
	return k;
}

static int add_red(Coop *co, int c, Wcr op)
{
	for (int i = 0; i < co->nred; i++)
		if (co->red[i] == c)
			return co->op[i] == op;
	if (co->nred == MAXRED)
		return 0;
	co->red[co->nred] = c;
	co->op[co->nred++] = op;
	return 1;
}

/* Stores in subtree n of loop L: flags 1 global store, 2 global wcr or
 * value-indexed store, 4 a row-local store that is not a reduction over
 * L's variable (reductions are collected in co). */
static int store_flags(Sdfg *g, Coop *co, Node *L, const Node *n)
{
	int f = 0;
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			f |= store_flags(g, co, L, n->kids[i]);
		return f;
	}
	if (n->kind != N_BLOCK)
		return store_flags(g, co, L, n->body);
	for (int i = 0; i < n->nts && !n->lib; i++) {
		const Tasklet *t = &n->ts[i];
		if (!t->store)
			continue;
		Container *c = sdfg_c(g, t->out.data);
		int value_ix = 0;
		for (int d = 0; d < c->rank; d++)
			value_ix |= ex_uses_kind(g, t->out.idx[d], SYM_VALUE);
		if (c->kind != CK_LOCAL) {
			f |= t->wcr != W_NONE || value_ix ? 2 : 1;
			continue;
		}
		if (!row_local(g, t->out.data, co->maps, co->depth))
			continue; /* a temporary of the loop's own */
		int dep = value_ix;
		for (int d = 0; d < c->rank; d++)
			dep |= L && ex_uses(t->out.idx[d], L->var);
		Dtype dt = c->dt;
		int okdt = dt == DT_F32 || dt == DT_F64 || dt == DT_I64;
		Wcr op = t->wcr;
		if (op == W_NONE && L && L->kind == N_FOR && c->rank == 0 && t->nin == 2 && t->dt == dt) {
			/* l = l op x, the only read of l in the loop */
			op = rmw_op(t->code);
			int self = -1;
			for (int k = 0; k < 2; k++)
				if (t->in[k].kind == OPD_MEM && t->in[k].m.data == t->out.data && !t->in[k].guard)
					self = k;
			if (self < 0 || count_reads(g, L->body, t->out.data) != 1)
				op = W_NONE;
		}
		else if (op != W_NONE && L && count_reads(g, L->body, t->out.data))
			op = W_NONE; /* the loop reads the partial value */
		if (!L || op == W_NONE || dep || !okdt || sdfg_numel(g, t->out.data) > 16 || !add_red(co, t->out.data, op))
			f |= 4;
	}
	return f;
}

static void flatten(Coop *co, Node *n, int *ok)
{
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			flatten(co, n->kids[i], ok);
		return;
	}
	if (co->nkids == (int)COUNTOF(co->kid)) {
		*ok = 0;
		return;
	}
	co->kid[co->nkids++] = n;
}

/* Plan the cooperative form of the nest; 0 if it is not worth it or not possible. */
static int coop_plan(Em *e, Coop *co, Node **maps, int depth, int64_t total)
{
	Sdfg *g = e->g;
	if (total > e->t->gpu_max_blocks || total < 1)
		return 0;
	memset(co, 0, sizeof *co);
	co->maps = maps;
	co->depth = depth;
	int ok = 1, worth = 0;
	flatten(co, maps[depth - 1]->body, &ok);
	for (int i = 0; i < co->nkids && ok; i++) {
		Node *k = co->kid[i];
		co->nred = 0;
		int loop = k->kind == N_MAP || k->kind == N_FOR;
		int f = store_flags(g, co, loop ? k : NULL, k);
		if (f & 2)
			return 0;
		int64_t n = -1, lo, hi;
		if (loop && ex_isint(k->lo, &lo) && ex_isint(k->hi, &hi))
			n = (hi - lo + k->step - 1) / k->step;
		if (loop && !(f & 4) && co->nred && !(f & 1)) {
			co->kind[i] = C_REDUCE;
			co->knred[i] = co->nred;
			memcpy(co->kred[i], co->red, sizeof co->red);
			memcpy(co->kop[i], co->op, sizeof co->op);
		}
		else if (k->kind == N_MAP && !(f & 4) && !co->nred)
			co->kind[i] = C_SPLIT;
		else
			co->kind[i] = C_REDUNDANT;
		worth |= co->kind[i] != C_REDUNDANT && n >= 32;
	}
	return ok && worth;
}

static const char *identity(Wcr op, Dtype dt)
{
	int fl = dt != DT_I64;
	switch (op) {
	case W_SUM: return fl ? "0" : "(int64_t)0";
	case W_PROD: return fl ? "1" : "(int64_t)1";
	case W_MAX: return fl ? "-INFINITY" : "INT64_MIN";
	case W_MIN: return fl ? "INFINITY" : "INT64_MAX";
	default: DOCC_UNREACHABLE();
	}
}

static void combine(Buf *b, Wcr op, Dtype dt, const char *x, const char *y)
{
	const char *sfx = dt == DT_F32 ? "f" : dt == DT_F64 ? "" : "i";
	switch (op) {
	case W_SUM: buf_printf(b, "%s + %s", x, y); break;
	case W_PROD: buf_printf(b, "%s * %s", x, y); break;
	case W_MAX: buf_printf(b, "dc_max%s(%s, %s)", sfx, x, y); break;
	case W_MIN: buf_printf(b, "dc_min%s(%s, %s)", sfx, x, y); break;
	default: DOCC_UNREACHABLE();
	}
}

static const char *shared_name(Dtype dt)
{
	return dt == DT_F32 ? "dc_shf" : dt == DT_F64 ? "dc_shd" : "dc_shi";
}

/* The loop over this thread's share of k's iterations. */
static void split_loop(Em *e, Node *k)
{
	const char *v = e->sn[k->var];
	emit_line(e, "for (int64_t %s = %s + (int64_t)threadIdx.x * %lld; %s < %s; %s += (int64_t)blockDim.x * %lld) {", v,
	          emit_expr_str(e, k->lo), (long long)k->step, v, emit_expr_str(e, k->hi), v, (long long)k->step);
	e->ind++;
	emit_locals(e, k);
	emit_node(e, k->body);
	e->ind--;
	emit_line(e, "}");
}

static void element(Em *e, Buf *b, int c, int64_t j)
{
	Container *ct = sdfg_c(e->g, c);
	if (ct->rank == 0)
		buf_printf(b, "l_%s", e->cn[c]);
	else
		buf_printf(b, "l_%s[%lld]", e->cn[c], (long long)j);
}

/* Combine every thread's value mine through shared memory: out = pre op
 * (all of them), by every thread, or by thread 0 alone (only0). */
static void emit_tree(Em *e, Wcr op, Dtype dt, const char *mine, const char *out, const char *pre, int only0)
{
	const char *sh = shared_name(dt);
	Buf t = {0}, y = {0}, f = {0}, z = {0};
	buf_printf(&t, "%s[threadIdx.x]", sh);
	buf_printf(&y, "%s[threadIdx.x + dc_s]", sh);
	buf_printf(&z, "%s[0]", sh);
	emit_line(e, "%s = %s;", t.s, mine);
	emit_line(e, "__syncthreads();");
	emit_line(e, "for (unsigned dc_s = blockDim.x / 2; dc_s > 0; dc_s >>= 1) {");
	combine(&f, op, dt, t.s, y.s);
	emit_line(e, "\tif (threadIdx.x < dc_s)");
	emit_line(e, "\t\t%s = %s;", t.s, f.s);
	emit_line(e, "\t__syncthreads();");
	emit_line(e, "}");
	f.len = 0;
	combine(&f, op, dt, pre, z.s);
	if (only0) {
		emit_line(e, "if (threadIdx.x == 0)");
		e->ind++;
	}
	emit_line(e, "%s = %s;", out, f.s);
	e->ind -= only0;
	emit_line(e, "__syncthreads();");
	buf_free(&t), buf_free(&y), buf_free(&f), buf_free(&z);
}

/* C_REDUCE child i of the row, its reductions as coop_plan found them. */
static void coop_reduce(Em *e, const Coop *co, int i)
{
	Sdfg *g = e->g;
	const int *red = co->kred[i];
	const Wcr *op = co->kop[i];
	emit_line(e, "{ /* reduction shared by the block's threads */");
	e->ind++;
	for (int r = 0; r < co->knred[i]; r++) {
		Container *c = sdfg_c(g, red[r]);
		int64_t n = sdfg_numel(g, red[r]);
		emit_line(e, "%s dc_p%d[%lld];", emit_storage_type[c->dt], r, (long long)n);
		for (int64_t j = 0; j < n; j++) {
			Buf x = {0};
			element(e, &x, red[r], j);
			emit_line(e, "dc_p%d[%lld] = %s;", r, (long long)j, x.s);
			emit_line(e, "%s = %s;", x.s, identity(op[r], c->dt));
			buf_free(&x);
		}
	}
	split_loop(e, co->kid[i]);
	for (int r = 0; r < co->knred[i]; r++) {
		Container *c = sdfg_c(g, red[r]);
		for (int64_t j = 0; j < sdfg_numel(g, red[r]); j++) {
			Buf x = {0}, p = {0};
			element(e, &x, red[r], j);
			buf_printf(&p, "dc_p%d[%lld]", r, (long long)j);
			emit_tree(e, op[r], c->dt, x.s, x.s, p.s, 0);
			buf_free(&x), buf_free(&p);
		}
	}
	e->ind--;
	emit_line(e, "}");
}

/* The body of a cooperative kernel: iterations dealt out to blocks. */
static void coop_body(Em *e, Coop *co, const char *total)
{
	Sdfg *g = e->g;
	int need[NDTYPES] = {0};
	for (int i = 0; i < co->nkids; i++)
		for (int r = 0; r < co->knred[i]; r++)
			need[sdfg_c(g, co->kred[i][r])->dt] = 1;
	static const Dtype dts[] = {DT_F32, DT_F64, DT_I64};
	for (int i = 0; i < 3; i++)
		if (need[dts[i]])
			emit_line(e, "__shared__ %s %s[%d];", emit_storage_type[dts[i]], shared_name(dts[i]), e->t->gpu_block);
	emit_line(e, "const int64_t dc_n = %s;", total);
	emit_line(e, "for (int64_t dc_t = blockIdx.x; dc_t < dc_n; dc_t += gridDim.x) {");
	e->ind++;
}

static void coop_kids(Em *e, Coop *co)
{
	for (int i = 0; i < co->nkids; i++) {
		Node *k = co->kid[i];
		switch (co->kind[i]) {
		case C_SPLIT:
			split_loop(e, k);
			emit_line(e, "__syncthreads();");
			break;
		case C_REDUCE:
			coop_reduce(e, co, i);
			break;
		default:
			emit_node(e, k);
			break;
		}
	}
}

/* ---- tiled contractions -------------------------------------------------------------
 *
 * A grid nest whose row body is some initializing blocks, one loop nest
 * whose only work is acc += X[fx] * Y[fy] (float32 sums of float32,
 * float16 or bfloat16 operands, acc a local of the row), and an epilogue
 * is a contraction: a GEMM, a convolution over its padded input, a batched
 * matmul. The grid variables split by which operand indexes with them: the
 * x space (only X), the y space (only Y), the batch (both, or neither).
 * With x and y at least GT_MIN wide and k at least GT_K long, the nest runs
 * as square tiles of S x S outputs per block: k goes in steps of GT_K,
 * each step's S x GT_K slice of X and GT_K x S slice of Y loaded by the
 * whole block into shared memory (every operand read once per block
 * instead of once per output), a barrier, the partial products, a barrier.
 * The operands are printed by the walker itself inside scopes that declare
 * the loop variables they use, so guards, views and strides need nothing
 * new. Then each thread takes its outputs, runs the row's init, adds its
 * sum to acc and runs the epilogue (bias, activation, residual: what fusion
 * left in the row); a warp's outputs are consecutive in y. S is the largest
 * of the kind's sizes whose tiles still give every SM a block (a batch-1
 * GEMM of 128 x 768 makes 24 tiles of 64 but 96 of 32: an H200 has 132
 * SMs), else the smallest.
 *
 * The partial products take one of gemm_kinds:
 *
 *   fp32   S = 64, 32 or 16 for 256 threads (16 x 16): each keeps its R x R
 *          sums (R = S / 16) in registers, outputs x = lx + 16 i,
 *          y = ly + 16 j; per k, R values of X and of Y from shared memory,
 *          R^2 fused multiply-adds (contraction_precision highest)
 *   tf32   tensor cores (CUDA wmma, sm_80+), S = 64 (8 warps, two 16x16
 *          accumulator fragments each) or 32 (4 warps, one each): the
 *          slices are stored rounded to tf32 (dc_tf32, to nearest, ties
 *          away, as cvt.rna), fp32 sums; at the end the fragments go
 *          through shared memory to the threads' outputs, thread t taking
 *          elements t, t + threads, ... of the tile (contraction_precision
 *          high)
 *   bf16   the same with the slices rounded to bfloat16 (dc_f2b, to
 *          nearest even): contraction_precision medium, and bfloat16 models
 *   fp16   float16 operands, exact in fp16 fragments: float16 models at
 *          every precision
 *
 * rocm, and cuda before sm_80, have no tensor-core kind: fp32 there.
 */
enum { GT_K = 32, GT_MIN = 16 };

typedef enum { GK_FP32, GK_TF32, GK_BF16, GK_FP16 } GemmKind;

static const struct {
	const char *name;          /* in --report's kernel list */
	const char *elem;          /* shared-memory element type */
	const char *wmma;          /* the fragments' input type, NULL for fp32 */
	const char *pre, *post;    /* rounding of a float into elem */
	int k, pad;                /* the fragment's k; padding of a shared row (16 bytes for wmma) */
} gemm_kinds[] = {
	[GK_FP32] = {"tiled-fp32", "float", NULL, "", "", 0, 1},
	[GK_TF32] = {"tiled-tf32", "float", "nvcuda::wmma::precision::tf32", "dc_tf32(", ")", 8, 4},
	[GK_BF16] = {"tiled-bf16", "__nv_bfloat16", "__nv_bfloat16", "__ushort_as_bfloat16(dc_f2b(", "))", 16, 8},
	[GK_FP16] = {"tiled-fp16", "__half", "__half", "__ushort_as_half(dc_f2h(", "))", 16, 8},
};

typedef struct {
	Node *maps[MAXDIM];
	int depth;
	Node *kids[64];
	int nkids, red;           /* the reduction nest is kids[red] */
	Node *chain[MAXDIM];      /* its loops, outermost first */
	int nchain;
	const Tasklet *t;         /* acc += X * Y */
	int grp[MAXDIM];          /* per grid map: 0 batch, 1 x, 2 y */
	int64_t nx, ny, nb, nk;
	GemmKind kind;
	int s, threads;           /* the tile's side, the block's threads */
	int r;                    /* fp32: sums per thread and dim; wmma: fragments per warp */
} Gemm;

static int64_t const_extent(Node *m)
{
	int64_t lo, hi;
	if (!ex_isint(m->lo, &lo) || !ex_isint(m->hi, &hi))
		return -1;
	return (hi - lo + m->step - 1) / m->step;
}

static int opd_uses(const Sdfg *g, const Operand *o, int var)
{
	const Container *c = &g->cs[o->m.data];
	for (int d = 0; d < c->rank; d++)
		if (ex_uses(o->m.idx[d], var))
			return 1;
	return 0;
}

static int float_operand(Sdfg *g, const Operand *o)
{
	Dtype d = o->kind == OPD_MEM ? sdfg_c(g, o->m.data)->dt : DT_BOOL;
	return d == DT_F32 || d == DT_F16 || d == DT_BF16;
}

/* The kind of a contraction of operands x and y on target t. */
static GemmKind gemm_kind(Sdfg *g, const Target *t, const Operand *x, const Operand *y)
{
	Dtype dx = sdfg_c(g, x->m.data)->dt, dy = sdfg_c(g, y->m.data)->dt;
	if (!t->gpu_tc)
		return GK_FP32;
	if (dx == DT_F16 && dy == DT_F16)
		return GK_FP16;
	if ((dx == DT_BF16 && dy == DT_BF16) || t->precision == CP_MEDIUM)
		return GK_BF16;
	return t->precision == CP_HIGH ? GK_TF32 : GK_FP32;
}

static int64_t gemm_tiles(const Gemm *gm, int64_t s)
{
	return gm->nb * ((gm->nx + s - 1) / s) * ((gm->ny + s - 1) / s);
}

/* The tile: the largest side whose tiles fill sms, else the smallest. */
static void gemm_tile(Gemm *gm, int sms)
{
	int tc = gm->kind != GK_FP32, s = 64, min = tc ? 32 : 16;
	while (s > min && gemm_tiles(gm, s) < sms)
		s /= 2;
	gm->s = s;
	gm->threads = tc ? (s == 64 ? 256 : 128) : 256;
	gm->r = tc ? (s == 64 ? 2 : 1) : s / 16;
}

static int gemm_plan(Em *e, Gemm *gm, Node **maps, int depth)
{
	Sdfg *g = e->g;
	memset(gm, 0, sizeof *gm);
	memcpy(gm->maps, maps, sizeof(Node *) * (size_t)depth);
	gm->depth = depth;
	gm->red = -1;
	Coop co = {0};
	int ok = 1;
	flatten(&co, maps[depth - 1]->body, &ok);
	if (!ok)
		return 0;
	memcpy(gm->kids, co.kid, sizeof(Node *) * (size_t)co.nkids);
	gm->nkids = co.nkids;
	/* the reduction nest: the first child made of perfectly nested
	 * rectangular loops around one tasklet acc += X * Y */
	const Tasklet *t = NULL;
	for (int i = 0; i < gm->nkids && gm->red < 0; i++) {
		Node *k = gm->kids[i];
		gm->nchain = 0;
		gm->nk = 1;
		while (k->kind == N_MAP || k->kind == N_FOR) {
			int64_t n = const_extent(k);
			int rect = gm->nchain < MAXDIM && k->body->nkids == 1 && n >= 1;
			for (int j = 0; j < gm->nchain && rect; j++)
				rect = !ex_uses(k->lo, gm->chain[j]->var) && !ex_uses(k->hi, gm->chain[j]->var);
			if (!rect)
				break;
			gm->chain[gm->nchain++] = k;
			gm->nk *= n;
			k = k->body->kids[0];
		}
		if (!gm->nchain || k->kind != N_BLOCK || k->lib || k->nts != 1)
			continue;
		const Tasklet *c = &k->ts[0];
		if (!c->store || c->wcr != W_SUM || c->code != T_MUL || c->dt != DT_F32 || c->bind >= 0 || c->nin != 2 ||
		    !float_operand(g, &c->in[0]) || !float_operand(g, &c->in[1]))
			continue;
		t = c;
		gm->red = i;
	}
	if (!t)
		return 0;
	Container *acc = sdfg_c(g, t->out.data);
	if (acc->dt != DT_F32 || !row_local(g, t->out.data, maps, depth))
		return 0;
	/* acc's index may only use reduction variables of extent 1 */
	for (int d = 0; d < acc->rank; d++)
		for (int i = 0; i < gm->nchain; i++)
			if (ex_uses(t->out.idx[d], gm->chain[i]->var) && const_extent(gm->chain[i]) != 1)
				return 0;
	/* nothing else in the row reads acc before the epilogue */
	for (int i = 0; i < gm->red; i++)
		if (count_reads(g, gm->kids[i], t->out.data))
			return 0;
	gm->t = t;
	gm->kind = gemm_kind(g, e->t, &t->in[0], &t->in[1]);
	gm->nx = gm->ny = gm->nb = 1;
	for (int i = 0; i < depth; i++) {
		int64_t n = const_extent(maps[i]);
		if (n < 1)
			return 0;
		int ux = opd_uses(g, &t->in[0], maps[i]->var), uy = opd_uses(g, &t->in[1], maps[i]->var);
		gm->grp[i] = ux && !uy ? 1 : uy && !ux ? 2 : 0;
		*(gm->grp[i] == 1 ? &gm->nx : gm->grp[i] == 2 ? &gm->ny : &gm->nb) *= n;
	}
	if (gm->nx < GT_MIN || gm->ny < GT_MIN || gm->nk < GT_K)
		return 0;
	gemm_tile(gm, e->t->gpu_sms);
	return 1;
}

/* const int64_t declarations of the variables of maps m[0..n) (of group
 * grp, or all with grp < 0) from the flat index ix over them. */
static void decompose(Em *e, Node *const *m, const int *grps, int n, int grp, const char *ix)
{
	int64_t inner = 1;
	for (int i = n - 1; i >= 0; i--) {
		if (grp >= 0 && grps[i] != grp)
			continue;
		int64_t ext = const_extent(m[i]);
		emit_line(e, "const int64_t %s = %s + ((%s) / %lld %% %lld) * %lld;", e->sn[m[i]->var], emit_expr_str(e, m[i]->lo),
		          ix, (long long)inner, (long long)ext, (long long)m[i]->step);
		inner *= ext;
	}
}

/* One operand's slice: rows (r) of the operand's own space by GT_K,
 * rounded to the kind's element type as it is stored. */
static void gemm_load(Em *e, const Gemm *gm, int which)
{
	int rows = gm->s;
	const char *tile = which ? "dc_ys" : "dc_xs", *n = which ? "dc_ny" : "dc_nx", *t0 = which ? "dc_ty" : "dc_tx";
	emit_line(e, "for (int dc_i = threadIdx.x; dc_i < %d; dc_i += blockDim.x) {", rows * GT_K);
	e->ind++;
	emit_line(e, "const int dc_r = dc_i / %d, dc_kk = dc_i %% %d;", GT_K, GT_K);
	emit_line(e, "const int64_t dc_o = %s * %d + dc_r, dc_k = dc_k0 + dc_kk;", t0, rows);
	emit_line(e, "float dc_v = 0.0f;");
	emit_line(e, "if (dc_o < %s && dc_k < dc_nk) {", n);
	e->ind++;
	decompose(e, gm->maps, gm->grp, gm->depth, 0, "dc_tb");
	decompose(e, gm->maps, gm->grp, gm->depth, which ? 2 : 1, "dc_o");
	decompose(e, gm->chain, NULL, gm->nchain, -1, "dc_k");
	Buf v = {0};
	emit_operand(e, &v, &gm->t->in[which], DT_F32);
	emit_line(e, "dc_v = %s;", v.s);
	buf_free(&v);
	e->ind--;
	emit_line(e, "}");
	emit_line(e, "%s[dc_kk][dc_r] = %sdc_v%s;", tile, gemm_kinds[gm->kind].pre, gemm_kinds[gm->kind].post);
	e->ind--;
	emit_line(e, "}");
}

/* The partial products of one k step from the slices in shared memory. */
static void gemm_products(Em *e, const Gemm *gm)
{
	if (gm->kind == GK_FP32) {
		emit_line(e, "for (int dc_kk = 0; dc_kk < %d; dc_kk++) {", GT_K);
		emit_line(e, "\tfloat dc_a[%d], dc_c[%d];", gm->r, gm->r);
		emit_line(e, "\t#pragma unroll");
		emit_line(e, "\tfor (int dc_i = 0; dc_i < %d; dc_i++) {", gm->r);
		emit_line(e, "\t\tdc_a[dc_i] = dc_xs[dc_kk][dc_lx + 16 * dc_i];");
		emit_line(e, "\t\tdc_c[dc_i] = dc_ys[dc_kk][dc_ly + 16 * dc_i];");
		emit_line(e, "\t}");
		emit_line(e, "\t#pragma unroll");
		emit_line(e, "\tfor (int dc_i = 0; dc_i < %d; dc_i++)", gm->r);
		emit_line(e, "\t\t#pragma unroll");
		emit_line(e, "\t\tfor (int dc_j = 0; dc_j < %d; dc_j++)", gm->r);
		emit_line(e, "\t\t\tdc_acc[dc_i][dc_j] += dc_a[dc_i] * dc_c[dc_j];");
		emit_line(e, "}");
		return;
	}
	const char *T = gemm_kinds[gm->kind].wmma;
	int k = gemm_kinds[gm->kind].k, pad = gemm_kinds[gm->kind].pad;
	emit_line(e, "#pragma unroll");
	emit_line(e, "for (int dc_kk = 0; dc_kk < %d; dc_kk += %d) {", GT_K, k);
	e->ind++;
	emit_line(e, "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, %d, %s, nvcuda::wmma::col_major> dc_fa;", k, T);
	emit_line(e, "nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, %d, %s, nvcuda::wmma::row_major> dc_fb;", k, T);
	emit_line(e, "nvcuda::wmma::load_matrix_sync(dc_fa, &dc_xs[dc_kk][dc_fm * 16], %d);", gm->s + pad);
	emit_line(e, "#pragma unroll");
	emit_line(e, "for (int dc_f = 0; dc_f < %d; dc_f++) {", gm->r);
	emit_line(e, "\tnvcuda::wmma::load_matrix_sync(dc_fb, &dc_ys[dc_kk][(dc_fn + dc_f) * 16], %d);", gm->s + pad);
	emit_line(e, "\tnvcuda::wmma::mma_sync(dc_c[dc_f], dc_fa, dc_fb, dc_c[dc_f]);");
	emit_line(e, "}");
	e->ind--;
	emit_line(e, "}");
}

/* The thread's outputs (dc_e of s * s / threads): each one's row
 * variables, in the row's order, then the row's own code with acc += the
 * sum. */
static void gemm_epilogue(Em *e, const Gemm *gm)
{
	int tc = gm->kind != GK_FP32;
	emit_line(e, "#pragma unroll");
	emit_line(e, "for (int dc_e = 0; dc_e < %d; dc_e++) {", gm->s * gm->s / gm->threads);
	e->ind++;
	if (tc)
		emit_line(e, "const int dc_i = (dc_e * %d + threadIdx.x) / %d, dc_j = (dc_e * %d + threadIdx.x) %% %d;", gm->threads,
		          gm->s, gm->threads, gm->s);
	else
		emit_line(e, "const int dc_i = dc_lx + 16 * (dc_e / %d), dc_j = dc_ly + 16 * (dc_e %% %d);", gm->r, gm->r);
	emit_line(e, "const int64_t dc_x = dc_tx * %d + dc_i, dc_y = dc_ty * %d + dc_j;", gm->s, gm->s);
	emit_line(e, "if (dc_x < dc_nx && dc_y < dc_ny) {");
	e->ind++;
	if (tc)
		emit_line(e, "const float dc_sum = dc_cs[dc_i][dc_j];");
	else
		emit_line(e, "const float dc_sum = dc_acc[dc_e / %d][dc_e %% %d];", gm->r, gm->r);
	for (int i = 0; i < gm->depth; i++) {
		const char *ix = gm->grp[i] == 1 ? "dc_x" : gm->grp[i] == 2 ? "dc_y" : "dc_tb";
		int64_t inner = 1;
		for (int j = i + 1; j < gm->depth; j++)
			if (gm->grp[j] == gm->grp[i])
				inner *= const_extent(gm->maps[j]);
		emit_line(e, "const int64_t %s = %s + (%s / %lld %% %lld) * %lld;", e->sn[gm->maps[i]->var],
		          emit_expr_str(e, gm->maps[i]->lo), ix, (long long)inner, (long long)const_extent(gm->maps[i]),
		          (long long)gm->maps[i]->step);
	}
	for (int i = 0; i < gm->depth; i++)
		emit_locals(e, gm->maps[i]);
	for (int i = 0; i < gm->red; i++)
		emit_node(e, gm->kids[i]);
	emit_line(e, "{");
	e->ind++;
	for (int i = 0; i < gm->nchain; i++)
		if (const_extent(gm->chain[i]) == 1)
			emit_line(e, "const int64_t %s = %s;", e->sn[gm->chain[i]->var], emit_expr_str(e, gm->chain[i]->lo));
	Buf lv = {0};
	emit_lvalue(e, &lv, &gm->t->out);
	emit_line(e, "%s += dc_sum;", lv.s);
	buf_free(&lv);
	e->ind--;
	emit_line(e, "}");
	for (int i = gm->red + 1; i < gm->nkids; i++)
		emit_node(e, gm->kids[i]);
	e->ind--;
	emit_line(e, "}");
	e->ind--;
	emit_line(e, "}");
}

static void gemm_body(Em *e, const Gemm *gm)
{
	int64_t tx = (gm->nx + gm->s - 1) / gm->s, ty = (gm->ny + gm->s - 1) / gm->s;
	int tc = gm->kind != GK_FP32, pad = gemm_kinds[gm->kind].pad;
	const char *T = gemm_kinds[gm->kind].elem, *al = tc ? "__align__(32) " : "";
	if (tc)
		e->wmma = 1;
	emit_line(e, "__shared__ %s%s dc_xs[%d][%d];", al, T, GT_K, gm->s + pad);
	emit_line(e, "__shared__ %s%s dc_ys[%d][%d];", al, T, GT_K, gm->s + pad);
	if (tc)
		emit_line(e, "__shared__ __align__(32) float dc_cs[%d][%d];", gm->s, gm->s + 4);
	emit_line(e, "const int64_t dc_nx = %lld, dc_ny = %lld, dc_nk = %lld;", (long long)gm->nx, (long long)gm->ny,
	          (long long)gm->nk);
	if (tc) /* warp w: fragment row w / (s / 16 / r), columns r (w % (s / 16 / r)) + [0, r) */
		emit_line(e, "const int dc_fm = threadIdx.x / 32 / %d, dc_fn = threadIdx.x / 32 %% %d * %d;", gm->s / 16 / gm->r,
		          gm->s / 16 / gm->r, gm->r);
	else
		emit_line(e, "const int dc_lx = threadIdx.x / 16, dc_ly = threadIdx.x %% 16;");
	emit_line(e, "for (int64_t dc_b = blockIdx.x; dc_b < %lld; dc_b += gridDim.x) {", (long long)(gm->nb * tx * ty));
	e->ind++;
	emit_line(e, "const int64_t dc_tb = dc_b / %lld, dc_tx = dc_b / %lld %% %lld, dc_ty = dc_b %% %lld;", (long long)(tx * ty),
	          (long long)ty, (long long)tx, (long long)ty);
	if (tc) {
		emit_line(e, "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, %d, float> dc_c[%d];", gemm_kinds[gm->kind].k,
		          gm->r);
		emit_line(e, "#pragma unroll");
		emit_line(e, "for (int dc_f = 0; dc_f < %d; dc_f++)", gm->r);
		emit_line(e, "\tnvcuda::wmma::fill_fragment(dc_c[dc_f], 0.0f);");
	} else {
		emit_line(e, "float dc_acc[%d][%d];", gm->r, gm->r);
		emit_line(e, "#pragma unroll");
		emit_line(e, "for (int dc_e = 0; dc_e < %d; dc_e++)", gm->r * gm->r);
		emit_line(e, "\tdc_acc[dc_e / %d][dc_e %% %d] = 0.0f;", gm->r, gm->r);
	}
	emit_line(e, "for (int64_t dc_k0 = 0; dc_k0 < dc_nk; dc_k0 += %d) {", GT_K);
	e->ind++;
	gemm_load(e, gm, 0);
	gemm_load(e, gm, 1);
	emit_line(e, "__syncthreads();");
	gemm_products(e, gm);
	emit_line(e, "__syncthreads();");
	e->ind--;
	emit_line(e, "}");
	if (tc) {
		emit_line(e, "#pragma unroll");
		emit_line(e, "for (int dc_f = 0; dc_f < %d; dc_f++)", gm->r);
		emit_line(e, "\tnvcuda::wmma::store_matrix_sync(&dc_cs[dc_fm * 16][(dc_fn + dc_f) * 16], dc_c[dc_f], %d, "
		             "nvcuda::wmma::mem_row_major);", gm->s + 4);
		emit_line(e, "__syncthreads();");
	}
	gemm_epilogue(e, gm);
	if (tc)
		emit_line(e, "__syncthreads(); /* dc_cs is read before the next tile's fragments land */");
	e->ind--;
	emit_line(e, "}");
}

/* float to tf32 as cvt.rna.tf32.f32 does it: to nearest, ties away from
 * zero, in the 13 low bits; inf and NaN as they are. */
static const char tf32_helper[] =
	"static __device__ inline float dc_tf32(float f) { uint32_t u; memcpy(&u, &f, 4); "
	"if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u; memcpy(&f, &u, 4); return f; }\n";

/* ---- launches --------------------------------------------------------------------------- */

/* The launch of kernel id at e's position: DC_LAUNCH, or DC_LAUNCH_SYNC
 * for kernels with barriers; grid is a C expression. With --report the
 * launch is also listed (e->launches: one JSON object a line; emit_step
 * puts the step's function for "@F@" and the node's label for "@L@"), with
 * its repeats per run (the host loops around it) and, for a tiled
 * contraction, its tile's side (else 0). */
static void launch(Em *e, Node *n, int id, const char *kind, int sync, const char *grid, int64_t block, int64_t shared,
                   int tile, const char *args)
{
	emit_line(e, "%s(%s_k%d, dim3(%s), dim3(%lld), dc_stream%s);", sync ? "DC_LAUNCH_SYNC" : "DC_LAUNCH", e->nm, id, grid,
	          (long long)block, args);
	if (!e->launches)
		return;
	int64_t times = 1;
	for (Node *p = n->parent; p; p = p->parent)
		if (p->kind == N_FOR)
			times *= const_extent(p) > 0 ? const_extent(p) : 1;
	buf_printf(e->launches, "{\"kernel\": \"%s_k%d\", \"node\": \"@L@\", \"kind\": \"%s\", \"grid\": ", e->nm, id, kind);
	if (strspn(grid, "0123456789") == strlen(grid))
		buf_puts(e->launches, grid);
	else
		buf_quote(e->launches, grid);
	buf_printf(e->launches, ", \"block\": %lld, \"shared_bytes\": %lld, \"tile\": %d, \"per_run\": %lld}\n",
	           (long long)block, (long long)shared, tile, (long long)times);
}

static const char *grid_of(Em *e, int64_t blocks)
{
	return arena_printf(e->g->arena, "%lld", (long long)(blocks < e->t->gpu_max_blocks ? blocks : e->t->gpu_max_blocks));
}

static int64_t gemm_shared(const Gemm *gm)
{
	int64_t es = gm->kind == GK_BF16 || gm->kind == GK_FP16 ? 2 : 4, pad = gemm_kinds[gm->kind].pad;
	return es * GT_K * 2 * (gm->s + pad) + (gm->kind != GK_FP32 ? 4 * gm->s * (gm->s + 4) : 0);
}

/* A kernel for subtree n: over the collapsed space of its first depth
 * maps, or one thread for depth 0; its launch printed at e's position. */
static void gpu_kernel(Em *e, Node *n, int depth)
{
	Sdfg *g = e->g;
	Node *maps[MAXDIM] = {n};
	for (int i = 1; i < depth; i++)
		maps[i] = maps[i - 1]->body->kids[0];
	int id = e->nkern++;
	Buf params = {0}, args = {0};
	kernel_params(e, n, &params, &args);
	Expr *ext[MAXDIM], *total = ex_int(g, 1);
	for (int i = 0; i < depth; i++) {
		ext[i] = extent(g, maps[i]);
		total = ex_mul(g, total, ext[i]);
	}
	int64_t nt = 0;
	Coop co;
	Gemm gm;
	int gemm = depth && ex_isint(total, &nt) && gemm_plan(e, &gm, maps, depth);
	int coop = !gemm && depth && ex_isint(total, &nt) && coop_plan(e, &co, maps, depth, nt);
	KFrame kf = kernel_open(e, id, &params);
	host_vars_used(e, n);
	if (gemm)
		gemm_body(e, &gm);
	else if (coop)
		coop_body(e, &co, emit_expr_str(e, total));
	else if (depth) {
		emit_line(e, "const int64_t dc_n = %s;", emit_expr_str(e, total));
		emit_line(e, "for (int64_t dc_t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; dc_t < dc_n; "
		             "dc_t += (int64_t)gridDim.x * blockDim.x) {");
		e->ind++;
	}
	if (depth && !gemm) {
		for (int i = 0; i < depth; i++) {
			Expr *inner = ex_int(g, 1);
			for (int j = i + 1; j < depth; j++)
				inner = ex_mul(g, inner, ext[j]);
			int64_t one;
			Buf ix = {0};
			buf_puts(&ix, "dc_t");
			if (!(ex_isint(inner, &one) && one == 1))
				buf_printf(&ix, " / (%s)", emit_expr_str(e, inner));
			if (i > 0)
				buf_printf(&ix, " %% (%s)", emit_expr_str(e, ext[i]));
			emit_line(e, "const int64_t %s = %s + (%s) * %lld;", e->sn[maps[i]->var], emit_expr_str(e, maps[i]->lo), ix.s,
			          (long long)maps[i]->step);
			buf_free(&ix);
		}
		for (int i = 0; i < depth; i++)
			emit_locals(e, maps[i]);
		if (coop)
			coop_kids(e, &co);
		else
			emit_node(e, maps[depth - 1]->body);
		e->ind--;
		emit_line(e, "}");
	} else if (!depth)
		emit_node(e, n);
	kernel_close(e, kf);
	const char *a = args.len ? args.s : "";
	if (gemm) {
		launch(e, n, id, gemm_kinds[gm.kind].name, 1, grid_of(e, gemm_tiles(&gm, gm.s)), gm.threads, gemm_shared(&gm), gm.s, a);
	} else if (coop)
		launch(e, n, id, "block-cooperative", 1, grid_of(e, nt), e->t->gpu_block, 0, 0, a);
	else if (!depth)
		launch(e, n, id, "single-thread", 0, "1", 1, 0, 0, a);
	else if (ex_isint(total, &nt)) {
		int64_t bs = e->t->gpu_block;
		if (nt <= 0)
			emit_line(e, "/* %s_k%d: empty grid */", e->nm, id);
		else
			launch(e, n, id, "grid-stride", 0, grid_of(e, (nt + bs - 1) / bs), nt < bs ? nt : bs, 0, 0, a);
	} else {
		const char *tn = emit_expr_str(e, total);
		int bs = e->t->gpu_block, cap = e->t->gpu_max_blocks;
		emit_line(e, "if ((%s) > 0)", tn);
		e->ind++;
		launch(e, n, id, "grid-stride", 0,
		       arena_printf(g->arena, "(unsigned)((%s) + %d - 1) / %d < %d ? (unsigned)(((%s) + %d - 1) / %d) : %d", tn, bs, bs,
		                    cap, tn, bs, bs, cap),
		       bs, 0, 0, a);
		e->ind--;
	}
	buf_free(&params);
	buf_free(&args);
}


/* A step-level loop nest that only accumulates into one small global
 * container ("acc[j] = acc[j] op x", the only read of acc in the nest, at
 * indices free of the nest's variables: a sum or max of a whole tensor)
 * runs as one block: the collapsed iterations dealt out to its threads,
 * each reducing into a private copy of acc from the identity, then the
 * shared-memory tree, and thread 0 folds the result into acc. */
typedef struct {
	Node *loops[MAXDIM];
	int nloops;
	Node *body;              /* the innermost block */
	int acc;                 /* the accumulator (a root container) */
	Wcr op;
} GReduce;

static int greduce_plan(Sdfg *g, Node *n, GReduce *r)
{
	memset(r, 0, sizeof *r);
	Node *k = n;
	while (k->kind == N_MAP || k->kind == N_FOR) {
		if (r->nloops == MAXDIM || k->body->nkids != 1)
			return 0;
		for (int i = 0; i < r->nloops; i++)
			if (ex_uses(k->lo, r->loops[i]->var) || ex_uses(k->hi, r->loops[i]->var))
				return 0;
		r->loops[r->nloops++] = k;
		k = k->body->kids[0];
	}
	if (k->kind != N_BLOCK || k->lib || !r->nloops)
		return 0;
	r->body = k;
	int stores = 0;
	for (int i = 0; i < k->nts; i++) {
		const Tasklet *t = &k->ts[i];
		if (t->bind >= 0 || t->code == T_INDEX || !t->store)
			continue;
		stores++;
		Container *c = sdfg_c(g, t->out.data);
		if (c->kind == CK_LOCAL || c->kind == CK_VIEW || t->wcr != W_NONE || t->nin != 2 || t->dt != c->dt)
			return 0;
		if (c->dt != DT_F32 && c->dt != DT_F64 && c->dt != DT_I64)
			return 0;
		for (int d = 0; d < c->rank; d++)
			for (int l = 0; l < r->nloops; l++)
				if (ex_uses(t->out.idx[d], r->loops[l]->var) || ex_uses_kind(g, t->out.idx[d], SYM_VALUE))
					return 0;
		int self = 0;
		for (int j = 0; j < 2; j++)
			self |= t->in[j].kind == OPD_MEM && t->in[j].m.data == t->out.data && !t->in[j].guard;
		r->op = rmw_op(t->code);
		r->acc = t->out.data;
		if (!self || r->op == W_NONE || count_reads(g, n, t->out.data) != 1 || sdfg_numel(g, t->out.data) > 16)
			return 0;
	}
	return stores == 1;
}

static void greduce_kernel(Em *e, Node *n, const GReduce *r)
{
	Sdfg *g = e->g;
	int id = e->nkern++;
	Buf params = {0}, args = {0};
	kernel_params(e, n, &params, &args);
	Container *acc = sdfg_c(g, r->acc);
	int64_t numel = sdfg_numel(g, r->acc);
	Expr *ext[MAXDIM], *total = ex_int(g, 1);
	for (int i = 0; i < r->nloops; i++) {
		ext[i] = extent(g, r->loops[i]);
		total = ex_mul(g, total, ext[i]);
	}
	KFrame kf = kernel_open(e, id, &params);
	host_vars_used(e, n);
	const char *T = emit_storage_type[acc->dt];
	emit_line(e, "__shared__ %s %s[%d];", T, shared_name(acc->dt), e->t->gpu_block);
	if (acc->rank == 0)
		emit_line(e, "%s l_%s = %s;", T, e->cn[r->acc], identity(r->op, acc->dt));
	else {
		emit_line(e, "%s l_%s[%lld];", T, e->cn[r->acc], (long long)numel);
		emit_line(e, "for (int dc_j = 0; dc_j < %lld; dc_j++)", (long long)numel);
		emit_line(e, "\tl_%s[dc_j] = %s;", e->cn[r->acc], identity(r->op, acc->dt));
	}
	emit_line(e, "for (int64_t dc_t = threadIdx.x; dc_t < %s; dc_t += blockDim.x) {", emit_expr_str(e, total));
	e->ind++;
	for (int i = 0; i < r->nloops; i++) {
		Expr *inner = ex_int(g, 1);
		for (int j = i + 1; j < r->nloops; j++)
			inner = ex_mul(g, inner, ext[j]);
		emit_line(e, "const int64_t %s = %s + (dc_t / (%s) %% (%s)) * %lld;", e->sn[r->loops[i]->var],
		          emit_expr_str(e, r->loops[i]->lo), emit_expr_str(e, inner), emit_expr_str(e, ext[i]), (long long)r->loops[i]->step);
	}
	for (int i = 0; i < r->nloops; i++)
		emit_locals(e, r->loops[i]);
	/* the body accumulates into the thread's copy: acc prints as a local */
	e->as_local = r->acc;
	emit_node(e, r->body);
	e->as_local = -1;
	e->ind--;
	emit_line(e, "}");
	for (int64_t j = 0; j < numel; j++) {
		char mine[96], out[96];
		if (acc->rank == 0)
			snprintf(mine, sizeof mine, "l_%s", e->cn[r->acc]);
		else
			snprintf(mine, sizeof mine, "l_%s[%lld]", e->cn[r->acc], (long long)j);
		snprintf(out, sizeof out, "v_%s[%lld]", e->cn[r->acc], (long long)j);
		emit_tree(e, r->op, acc->dt, mine, out, out, 1);
	}
	kernel_close(e, kf);
	launch(e, n, id, "block-reduce", 1, "1", e->t->gpu_block, 0, 0, args.len ? args.s : "");
	buf_free(&params);
	buf_free(&args);
}

static void gpu_plain_loop(Em *e, Node *n)
{
	const char *v = e->sn[n->var];
	if (n->sched == SCHED_UNROLL)
		emit_line(e, "#pragma unroll");
	emit_line(e, "for (int64_t %s = %s; %s < %s; %s += %lld) {", v, emit_expr_str(e, n->lo), v, emit_expr_str(e, n->hi), v,
	          (long long)n->step);
	e->ind++;
	emit_locals(e, n);
	emit_node(e, n->body);
	e->ind--;
	emit_line(e, "}");
}

/* Does subtree n hold a map the schedule made a grid? */
static int has_grid(const Node *n)
{
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			if (has_grid(n->kids[i]))
				return 1;
		return 0;
	}
	if (n->kind == N_BLOCK)
		return 0;
	return n->sched == SCHED_GPU_THREAD || has_grid(n->body);
}

static void gpu_loop(Em *e, Node *n)
{
	GReduce r;
	if (e->inkern)
		gpu_plain_loop(e, n);
	else if (n->kind == N_FOR && has_grid(n->body))
		gpu_plain_loop(e, n); /* a host loop (schedule.c): its kernels launched every iteration */
	else if (n->kind == N_MAP && n->sched == SCHED_GPU_THREAD)
		gpu_kernel(e, n, n->collapse > 0 ? n->collapse : 1);
	else if (greduce_plan(e->g, n, &r))
		greduce_kernel(e, n, &r);
	else
		gpu_kernel(e, n, 0);
}

static void gpu_block(Em *e, Node *n)
{
	if (!e->inkern) {
		gpu_kernel(e, n, 0);
		return;
	}
	emit_line(e, "{");
	e->ind++;
	emit_block(e, n);
	e->ind--;
	emit_line(e, "}");
}

static void gpu_forward(Em *e)
{
	Sdfg *g = e->g;
	emit_line(e, "static void %s_forward(const unsigned char *dc_W, unsigned char *dc_ws, cudaStream_t dc_stream, int *dc_err,",
	          e->nm);
	if (g->ndims)
		emit_line(e, "\tconst void *const *dc_in, void *const *dc_out, const int64_t *dc_dims, const int64_t *dc_ofs)");
	else
		emit_line(e, "\tconst void *const *dc_in, void *const *dc_out)");
	emit_line(e, "{");
	e->ind++;
	emit_line(e, "(void)dc_W; (void)dc_ws; (void)dc_in; (void)dc_out;");
	if (g->ndims) {
		emit_line(e, "(void)dc_ofs;");
		emit_dims_locals(e, "dc_dims");
	}
	unsigned char *set = arena_alloc(g->arena, (size_t)g->ncs + 1);
	for (int i = 0; i < g->root->nkids; i++) {
		Node *k = g->root->kids[i];
		memset(set, 0, (size_t)g->ncs + 1);
		emit_touched(g, k, set);
		emit_line(e, "{ /* %s */", emit_comment(e->g->arena, k->label && *k->label ? k->label : "?"));
		e->top = k->label;
		e->ind++;
		emit_step(e, k, set);
		e->ind--;
		emit_line(e, "}");
	}
	e->ind--;
	emit_line(e, "}");
	buf_puts(e->b, "\n");
}

/* The host API; @N@ stands for the model name. */
static const char api_common[] =
	"static thread_local char dc_create_msg[512];\n\n"
	"static void dc_default_log(void *user, int level, const char *msg)\n{\n"
	"\t(void)user, (void)level;\n\tfprintf(stderr, \"%s\\n\", msg);\n}\n\n"
	"static int dc_rt_error(@N@_t *m, cudaError_t e, const char *what)\n{\n"
	"\tsnprintf(m ? m->msg : dc_create_msg, sizeof dc_create_msg, \"@N@: %s failed: %s (%s, "
	"error %d); @N@ needs a usable \" DC_RUNTIME \" GPU (check the driver and the device), or build it for the host with -t openmp\",\n"
	"\t         what, cudaGetErrorString(e), cudaGetErrorName(e), (int)e);\n"
	"\t(void)cudaGetLastError();\n\treturn e == cudaErrorMemoryAllocation ? DOCCC_ERR_NOMEM : DOCCC_ERR_DEVICE;\n}\n\n"
	"#define DC_TRY(m, call, what) do { cudaError_t dc_e = (call); if (dc_e != cudaSuccess) return dc_rt_error((m), dc_e, (what)); } while (0)\n\n"
	"/* the run's status: synchronize, read the flag the run copied to the host, clear it */\n"
	"static int dc_finish(@N@_t *m)\n{\n"
	"\tDC_TRY(m, cudaStreamSynchronize(m->stream), \"the run\");\n"
	"\tint f = *m->flag;\n\t*m->flag = 0;\n"
	"\tif (f) {\n\t\tDC_TRY(m, cudaMemsetAsync(m->err, 0, sizeof(int), m->stream), \"clearing the run's status\");\n"
	"\t\tDC_TRY(m, cudaStreamSynchronize(m->stream), \"clearing the run's status\");\n\t}\n\treturn DC_STATUS(m, f);\n}\n\n"
	"/* the run on stream s: its kernels, then the copy of its status flag to the host */\n"
	"static cudaError_t dc_enqueue(@N@_t *m, cudaStream_t s, const void *const *ins, void *const *outs)\n{\n"
	"\t@N@_forward(m->w, m->ws, s, m->err, ins, outs@DIMS@);\n\tcudaError_t e = cudaGetLastError();\n"
	"\treturn e != cudaSuccess ? e : cudaMemcpyAsync(m->flag, m->err, sizeof(int), cudaMemcpyDeviceToHost, s);\n}\n\n"
	"/* the graph slot of these pointers (*hit = 1), else an empty or the least recently used one */\n"
	"static dc_graph *dc_graph_for(@N@_t *m, const void *const *ins, void *const *outs, int *hit)\n{\n"
	"\tdc_graph *lru = &m->graphs[0];\n\tfor (int k = 0; k < DC_GRAPHS; k++) {\n\t\tdc_graph *x = &m->graphs[k];\n"
	"\t\tint same = x->exec != NULL;\n\t\tfor (int i = 0; same && i < @NIN@; i++)\n\t\t\tsame = x->key[i] == ins[i];\n"
	"\t\tfor (int i = 0; same && i < @NOUT@; i++)\n\t\t\tsame = x->key[@NIN@ + i] == outs[i];\n"
	"\t\tif (same) {\n\t\t\t*hit = 1;\n\t\t\treturn x;\n\t\t}\n"
	"\t\tif (lru->exec && (!x->exec || x->used < lru->used))\n\t\t\tlru = x;\n\t}\n\t*hit = 0;\n\treturn lru;\n}\n\n"
	"/* Capture the run on the model's stream into slot x: x's executable graph updated in place,\n"
	" * or a new one. The capture ends on every path; a failed capture leaves x as it was. */\n"
	"static int dc_capture(@N@_t *m, dc_graph *x, const void *const *ins, void *const *outs)\n{\n"
	"\tcudaGraph_t g = NULL;\n"
	"\tDC_TRY(m, cudaStreamBeginCapture(m->own, cudaStreamCaptureModeThreadLocal), DC_GRAPH_WHAT);\n"
	"\tcudaError_t e = dc_enqueue(m, m->own, ins, outs);\n\tcudaError_t end = cudaStreamEndCapture(m->own, &g);\n"
	"\tif (e == cudaSuccess)\n\t\te = end;\n"
	"\tif (e == cudaSuccess && x->exec && dc_graph_update(x->exec, g) != cudaSuccess) {\n"
	"\t\t(void)cudaGetLastError(); /* another shape: instantiate anew */\n"
	"\t\t(void)cudaGraphExecDestroy(x->exec);\n\t\tx->exec = NULL;\n\t}\n"
	"\tif (e == cudaSuccess && !x->exec && (e = cudaGraphInstantiateWithFlags(&x->exec, g, 0)) != cudaSuccess)\n"
	"\t\tx->exec = NULL;\n\tif (g)\n\t\t(void)cudaGraphDestroy(g);\n"
	"\tif (e != cudaSuccess)\n\t\treturn dc_rt_error(m, e, DC_GRAPH_WHAT);\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n\t\tx->key[i] = ins[i];\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n\t\tx->key[@NIN@ + i] = outs[i];\n\treturn DOCCC_OK;\n}\n\n"
	"/* Issue the run on m->stream: eagerly without graphs, at the first run (a warm-up) and into a\n"
	" * capture of the caller's; else as the graph of these pointers, captured if there is none. */\n"
	"static int dc_launch(@N@_t *m, const void *const *ins, void *const *outs)\n{\n"
	"\t(void)cudaGetLastError();\n\tcudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;\n"
	"\tif (m->own && m->async)\n\t\tDC_TRY(m, cudaStreamIsCapturing(m->stream, &cs), \"querying the stream's capture status\");\n"
	"\tif (!m->own || !m->runs || cs != cudaStreamCaptureStatusNone) {\n"
	"\t\tDC_TRY(m, dc_enqueue(m, m->stream, ins, outs), \"a kernel launch\");\n\t\tm->runs++;\n\t\treturn DOCCC_OK;\n\t}\n"
	"\tint hit;\n\tdc_graph *x = dc_graph_for(m, ins, outs, &hit);\n"
	"\tint rc = hit ? DOCCC_OK : dc_capture(m, x, ins, outs);\n\tif (rc)\n\t\treturn rc;\n"
	"\tx->used = m->runs;\n"
	"\tDC_TRY(m, cudaGraphLaunch(x->exec, m->stream), \"launching the run's \" DC_RUNTIME \" graph\");\n"
	"\tm->runs++;\n\treturn DOCCC_OK;\n}\n\n"
	"/* a run on the model's stream starts after earlier legacy-stream work, as on that stream */\n"
	"static int dc_order(@N@_t *m)\n{\n\tif (!m->own || m->async)\n\t\treturn DOCCC_OK;\n"
	"\tcudaError_t e = cudaEventRecord(m->legacy, 0);\n\tif (e == cudaSuccess)\n\t\te = cudaStreamWaitEvent(m->own, m->legacy, 0);\n"
	"\treturn e == cudaSuccess ? DOCCC_OK : dc_rt_error(m, e, \"ordering the run after the default stream\");\n}\n\n"
	"static int dc_check_pointers(@N@_t *m, const void *const *ins, void *const *outs)\n{\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n\t\tif (!dc_is_device(ins[i])) {\n"
	"\t\t\tsnprintf(m->msg, sizeof m->msg, \"@N@_run: input %d ('%s') is not GPU memory: @N@_run takes device pointers \"\n"
	"\t\t\t         \"(cudaMalloc/hipMalloc, or a GPU tensor's data pointer); copy it to the GPU first, or call @N@_run_host, \"\n"
	"\t\t\t         \"which copies on every call\", i, dc_ins[i].name);\n\t\t\treturn DOCCC_ERR_DEVICE;\n\t\t}\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n\t\tif (!dc_is_device(outs[i])) {\n"
	"\t\t\tsnprintf(m->msg, sizeof m->msg, \"@N@_run: output %d ('%s') is not GPU memory: @N@_run writes through device \"\n"
	"\t\t\t         \"pointers; allocate it on the GPU, or call @N@_run_host\", i, dc_outs[i].name);\n"
	"\t\t\treturn DOCCC_ERR_DEVICE;\n\t\t}\n\treturn DOCCC_OK;\n}\n\n"
	"/* pointers a graph was captured with were checked then: a replay skips the runtime's pointer queries */\n"
	"static int dc_run(@N@_t *m, const void *const *ins, void *const *outs)\n{\n"
	"\tint hit = 0;\n\tif (m->own && m->runs)\n\t\t(void)dc_graph_for(m, ins, outs, &hit);\n"
	"\tint rc = hit ? DOCCC_OK : dc_check_pointers(m, ins, outs);\n\tif (rc == DOCCC_OK)\n\t\trc = dc_order(m);\n"
	"\tif (rc == DOCCC_OK)\n\t\trc = dc_launch(m, ins, outs);\n"
	"\tif (rc == DOCCC_OK && !m->async)\n\t\trc = dc_finish(m);\n\treturn rc;\n}\n\n"
	"static int dc_run_host(@N@_t *m, const void *const *ins, void *const *outs)\n{\n"
	"\tif (!m->warned) {\n\t\tm->warned = 1;\n\t\tm->log(m->log_user, DOCCC_LOG_WARNING, \"@N@: performance warning: @N@_run_host \"\n"
	"\t\t       \"copies the inputs to the GPU and the outputs back on every call; pass device pointers to @N@_run to avoid it\");\n\t}\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n\t\tif (!m->hin[i])\n"
	"\t\t\tDC_TRY(m, cudaMalloc(&m->hin[i], @INB@ ? @INB@ : 1), \"cudaMalloc of an input buffer\");\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n\t\tif (!m->hout[i])\n"
	"\t\t\tDC_TRY(m, cudaMalloc(&m->hout[i], @OUTB@ ? @OUTB@ : 1), \"cudaMalloc of an output buffer\");\n"
	"\tint rc = dc_order(m);\n\tif (rc)\n\t\treturn rc;\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n"
	"\t\tDC_TRY(m, cudaMemcpyAsync(m->hin[i], ins[i], @INB@, cudaMemcpyHostToDevice, m->stream), \"copying an input to the GPU\");\n"
	"\trc = dc_launch(m, (const void *const *)m->hin, m->hout);\n\tif (rc)\n\t\treturn rc;\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n"
	"\t\tDC_TRY(m, cudaMemcpyAsync(outs[i], m->hout[i], @OUTB@, cudaMemcpyDeviceToHost, m->stream), \"copying an output to the host\");\n"
	"\treturn dc_finish(m);\n}\n\n";

static const char api_create[] =
	"static int dc_setup(@N@_t *m, const char *weights_path)\n{\n\t(void)weights_path;\n"
	"\tif (@WS@)\n\t\tDC_TRY(m, cudaMalloc((void **)&m->ws, @WS@), \"cudaMalloc of the workspace\");\n"
	"\tDC_TRY(m, cudaMalloc((void **)&m->err, sizeof(int)), \"cudaMalloc of the status flag\");\n"
	"\tDC_TRY(m, cudaMemset(m->err, 0, sizeof(int)), \"cudaMemset of the status flag\");\n"
	"\tint *flag = NULL;\n\tDC_TRY(m, cudaMallocHost((void **)&flag, sizeof(int)), \"cudaMallocHost of the status flag\");\n"
	"\tm->flag = flag;\n\t*flag = 0;\n"
	"\tconst char *graphs = getenv(\"DOCCC_GPU_GRAPHS\");\n\tif (!graphs || strcmp(graphs, \"0\") != 0) {\n"
	"\t\tcudaStream_t own = NULL;\n\t\tcudaEvent_t legacy = NULL;\n"
	"\t\tDC_TRY(m, cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), \"creating the model's stream\");\n"
	"\t\tm->own = m->stream = own;\n"
	"\t\tDC_TRY(m, cudaEventCreateWithFlags(&legacy, cudaEventDisableTiming), \"creating the model's event\");\n"
	"\t\tm->legacy = legacy;\n\t}\n"
	"\tif (!DC_WEIGHTS_SIZE)\n\t\treturn DOCCC_OK;\n"
	"\tDC_TRY(m, cudaMalloc((void **)&m->w, DC_WEIGHTS_SIZE), \"cudaMalloc of the weights\");\n";

static const char api_weights_embedded[] =
	"\tDC_TRY(m, cudaMemcpy(m->w, @N@_weights_blob, DC_WEIGHTS_SIZE, cudaMemcpyHostToDevice), \"uploading the weights\");\n"
	"\treturn DOCCC_OK;\n}\n\n";

static const char api_weights_file[] =
	"\tvoid *map;\n\tint rc = dc_weights_map(weights_path, &map, m->msg, sizeof m->msg);\n\tif (rc)\n\t\treturn rc;\n"
	"\tcudaError_t e = cudaMemcpy(m->w, (char *)map + 128, DC_WEIGHTS_SIZE, cudaMemcpyHostToDevice);\n"
	"\tmunmap(map, 128 + DC_WEIGHTS_SIZE);\n\tif (e != cudaSuccess)\n\t\treturn dc_rt_error(m, e, \"uploading the weights\");\n"
	"\treturn DOCCC_OK;\n}\n\n";

static const char api_rest[] =
	"void @N@_destroy(@N@_t *model)\n{\n\tif (!model)\n\t\treturn;\n"
	"\tfor (int k = 0; k < DC_GRAPHS; k++)\n\t\tif (model->graphs[k].exec)\n\t\t\t(void)cudaGraphExecDestroy(model->graphs[k].exec);\n"
	"\t(void)cudaFree(model->ws);\n\t(void)cudaFree(model->w);\n\t(void)cudaFree(model->err);\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n\t\t(void)cudaFree(model->hin[i]);\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n\t\t(void)cudaFree(model->hout[i]);\n"
	"\tif (model->flag)\n\t\t(void)cudaFreeHost(model->flag);\n"
	"\tif (model->legacy)\n\t\t(void)cudaEventDestroy(model->legacy);\n"
	"\tif (model->own)\n\t\t(void)cudaStreamDestroy(model->own);\n"
	"\t(void)cudaGetLastError();\n\tfree(model);\n}\n\n"
	"int @N@_create_from(@N@_t **model, const char *weights_path)\n{\n"
	"\tif (!model)\n\t\treturn DOCCC_ERR_ARG;\n\t*model = NULL;\n\tdc_create_msg[0] = 0;\n\tint n = 0;\n"
	"\tcudaError_t e = cudaGetDeviceCount(&n);\n\tif (e != cudaSuccess)\n\t\treturn dc_rt_error(NULL, e, \"finding a GPU\");\n"
	"\tif (n < 1) {\n\t\tsnprintf(dc_create_msg, sizeof dc_create_msg, \"@N@: no \" DC_RUNTIME \" GPU found; build for the host with -t openmp\");\n"
	"\t\treturn DOCCC_ERR_DEVICE;\n\t}\n"
	"\t@N@_t *m = (@N@_t *)calloc(1, sizeof *m);\n\tif (!m)\n\t\treturn DOCCC_ERR_NOMEM;\n"
	"\tm->log = dc_default_log;\n\tint rc = dc_setup(m, weights_path);\n"
	"\tif (rc) {\n\t\tmemcpy(dc_create_msg, m->msg, sizeof dc_create_msg);\n\t\t@N@_destroy(m);\n\t\treturn rc;\n\t}\n"
	"\t*model = m;\n\treturn DOCCC_OK;\n}\n\n"
	"int @N@_create(@N@_t **model)\n{\n\treturn @N@_create_from(model, NULL);\n}\n\n"
	"int @N@_set_stream(@N@_t *model, void *stream)\n{\n\tif (!model)\n\t\treturn DOCCC_ERR_ARG;\n"
	"\tmodel->stream = stream ? (cudaStream_t)stream : model->own;\n\tmodel->async = stream != NULL;\n\treturn DOCCC_OK;\n}\n\n"
	"int @N@_sync(@N@_t *model)\n{\n\treturn model ? dc_finish(model) : DOCCC_ERR_ARG;\n}\n\n"
	"const char *@N@_last_error(const @N@_t *model)\n{\n\treturn model ? model->msg : dc_create_msg;\n}\n\n"
	"void @N@_set_log(@N@_t *model, doccc_log_fn fn, void *user)\n{\n\tif (!model)\n\t\treturn;\n"
	"\tmodel->log = fn ? fn : dc_default_log;\n\tmodel->log_user = user;\n}\n\n"
	"int @N@_set_num_threads(@N@_t *model, int n)\n{\n\tif (!model || n < 1)\n\t\treturn DOCCC_ERR_ARG;\n"
	"\treturn n == 1 ? DOCCC_OK : DOCCC_ERR_THREADS;\n}\n\n"
	"size_t @N@_workspace_size(void)\n{\n\treturn DC_WORKSPACE_SIZE;\n}\n\n"
	"static int dc_generic(void *model, const void *const *ins, void *const *outs, int host)\n{\n"
	"\tif (!model || (!ins && @NIN@) || (!outs && @NOUT@))\n\t\treturn DOCCC_ERR_ARG;\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n\t\tif (!ins[i])\n\t\t\treturn DOCCC_ERR_ARG;\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n\t\tif (!outs[i])\n\t\t\treturn DOCCC_ERR_ARG;\n@UNSET@"
	"\treturn host ? dc_run_host((@N@_t *)model, ins, outs) : dc_run((@N@_t *)model, ins, outs);\n}\n\n"
	"static int dc_run_generic(void *m, const void *const *ins, void *const *outs) { return dc_generic(m, ins, outs, 0); }\n"
	"static int dc_run_host_generic(void *m, const void *const *ins, void *const *outs) { return dc_generic(m, ins, outs, 1); }\n"
	"static int dc_create(void **m, const char *p) { return @N@_create_from((@N@_t **)m, p); }\n"
	"static void dc_destroy(void *m) { @N@_destroy((@N@_t *)m); }\n"
	"static int dc_threads(void *m, int n) { return @N@_set_num_threads((@N@_t *)m, n); }\n"
	"static int dc_set_stream(void *m, void *s) { return @N@_set_stream((@N@_t *)m, s); }\n"
	"static int dc_sync(void *m) { return @N@_sync((@N@_t *)m); }\n"
	"static const char *dc_last_error(const void *m) { return @N@_last_error((const @N@_t *)m); }\n"
	"static void dc_set_log(void *m, doccc_log_fn fn, void *user) { @N@_set_log((@N@_t *)m, fn, user); }\n"
	"static int dc_dev_alloc(void **p, size_t n)\n{\n"
	"\tif (!p)\n\t\treturn DOCCC_ERR_ARG;\n\tif (cudaMalloc(p, n ? n : 1) != cudaSuccess) {\n"
	"\t\t(void)cudaGetLastError();\n\t\treturn DOCCC_ERR_DEVICE;\n\t}\n\treturn DOCCC_OK;\n}\n"
	"static int dc_dev_free(void *p)\n{\n\tif (cudaFree(p) != cudaSuccess) {\n\t\t(void)cudaGetLastError();\n"
	"\t\treturn DOCCC_ERR_DEVICE;\n\t}\n\treturn DOCCC_OK;\n}\n"
	"static int dc_dev_copy(void *dst, const void *src, size_t n, int dir)\n{\n"
	"\tif (dir != DOCCC_COPY_TO_DEVICE && dir != DOCCC_COPY_TO_HOST)\n\t\treturn DOCCC_ERR_ARG;\n"
	"\tif (cudaMemcpy(dst, src, n, dir == DOCCC_COPY_TO_DEVICE ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) != cudaSuccess) {\n"
	"\t\t(void)cudaGetLastError();\n\t\treturn DOCCC_ERR_DEVICE;\n\t}\n\treturn DOCCC_OK;\n}\n\n";

/* The API text with its placeholders: the name, the counts, and what a
 * library with run-time dims does differently (the dims to forward, the
 * inputs' and outputs' bytes at the dims, the workspace create allocates,
 * a run before set_dims). */
static void put_api(Buf *b, const char *text, const char *nm, int nin, int nout, int dyn)
{
	char nin_s[16], nout_s[16];
	snprintf(nin_s, sizeof nin_s, "%d", nin);
	snprintf(nout_s, sizeof nout_s, "%d", nout);
	const char *subst[][2] = {
		{"@N@", nm}, {"@NIN@", nin_s}, {"@NOUT@", nout_s},
		{"@DIMS@", dyn ? ", m->dims, m->ofs" : ""},
		{"@INB@", dyn ? "m->inb[i]" : "dc_ins[i].nbytes"}, {"@OUTB@", dyn ? "m->outb[i]" : "dc_outs[i].nbytes"},
		{"@WS@", dyn ? "(m->wscap = dc_prealloc())" : "DC_WORKSPACE_SIZE"},
		{"@UNSET@", dyn ? "\tif (!((@N@_t *)model)->dims_set)\n\t\treturn dc_unset((@N@_t *)model);\n" : ""},
	};
	Buf cur = {0};
	buf_puts(&cur, text);
	for (int pass = 0; pass < 2; pass++) /* @UNSET@ brings an @N@ of its own */
		for (size_t k = 0; k < sizeof subst / sizeof subst[0]; k++) {
			Buf next = {0};
			emit_replace_all(&next, cur.s, subst[k][0], subst[k][1]);
			buf_free(&cur);
			cur = next;
		}
	buf_puts(b, cur.s);
	buf_free(&cur);
}

/* NAME_run or NAME_run_host with typed pointers. */
static void typed_run(Em *e, int host)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	const char *nm = e->nm;
	buf_printf(b, "int %s_run%s(%s_t *model", nm, host ? "_host" : "", nm);
	for (int i = 0; i < g->ninputs; i++)
		buf_printf(b, ", const %s *in%d", emit_storage_type[sdfg_c(g, g->inputs[i])->dt], i);
	for (int i = 0; i < g->noutputs; i++)
		buf_printf(b, ", %s *out%d", emit_storage_type[sdfg_c(g, g->outputs[i])->dt], i);
	buf_printf(b, ")\n{\n\tconst void *ins[%d] = {", g->ninputs + 1);
	for (int i = 0; i < g->ninputs; i++)
		buf_printf(b, "%sin%d", i ? ", " : "", i);
	buf_printf(b, "%s};\n\tvoid *outs[%d] = {", g->ninputs ? "" : "0", g->noutputs + 1);
	for (int i = 0; i < g->noutputs; i++)
		buf_printf(b, "%sout%d", i ? ", " : "", i);
	buf_printf(b, "%s};\n\treturn dc_generic(model, ins, outs, %d);\n}\n\n", g->noutputs ? "" : "0", host);
}

static void gpu_emit_file(Em *ep, const BuildArgs *a, const Blob *w)
{
	Em e = *ep;
	Sdfg *g = e.g;
	const Target *t = e.t;
	Buf *b = e.b;
	const char *nm = g->name;
	buf_printf(b, "/*\n * %s.cu - generated by doccc %s; do not edit.\n * target %s, category %s, architecture %s%s%s\n"
	              " * options: %s\n * input sha256 %s\n */\n",
	           nm, DOCCC_VERSION, t->name, t->category, emit_comment(g->arena, t->march), t->simulate ? ", simulated on the host" : "",
	           t->approx ? ", approximate math" : "", emit_comment(g->arena, a->cmdline), g->hash);
	Buf kern = {0}, fwd = {0};
	e.kern = &kern;
	e.b = &fwd;
	gpu_forward(&e);
	e.b = b;
	if (e.wmma)
		buf_puts(b, "#define DC_WMMA 1\n");
	buf_puts(b, "#include \"doccc_gpu.h\"\n#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n");
	buf_printf(b, "#include \"%s.h\"\n\n", nm);
	/* the CPU's helpers as device functions; copysign(0, x) would be C++'s
	 * host-only template overload */
	Buf hl = {0};
	emit_replace_all(&hl, emit_scalar_helpers, "static inline ", "static __device__ inline ");
	emit_replace_all(b, hl.s, "copysign(0, ", "copysign(0.0, ");
	buf_free(&hl);
	if (e.wmma)
		buf_puts(b, tf32_helper);
	buf_puts(b, "\n");
	if (kern.len)
		buf_puts(b, kern.s);
	buf_puts(b, fwd.s);
	buf_free(&kern);
	buf_free(&fwd);

	/* host code only from here: HIP's device pass must not see the
	 * descriptor's references to host functions */
	buf_puts(b, "#if !defined(__HIP_DEVICE_COMPILE__)\n");
	/* launch-free replay (the top comment): the executable graphs by pointers */
	buf_printf(b, "#define DC_GRAPHS 4\n#define DC_GRAPH_WHAT \"capturing the run as a \" DC_RUNTIME \" graph (DOCCC_GPU_GRAPHS=0 runs without)\"\n"
	              "typedef struct {\n\tcudaGraphExec_t exec;\n\tconst void *key[%d];\n\tlong used;\n} dc_graph;\n\n",
	           g->ninputs + g->noutputs + 1);
	buf_printf(b, "struct %s {\n\tunsigned char *ws;\n\tunsigned char *w;\n\tint *err;\n\tint *flag;\n\tcudaStream_t stream;\n"
	              "\tcudaStream_t own;\n\tcudaEvent_t legacy;\n\tint async;\n"
	              "\tvoid *hin[%d];\n\tvoid *hout[%d];\n\tint warned;\n\tdoccc_log_fn log;\n\tvoid *log_user;\n\tlong runs;\n"
	              "\tdc_graph graphs[DC_GRAPHS];\n\tchar msg[512];\n", nm, g->ninputs + 1, g->noutputs + 1);
	if (g->ndims)
		buf_printf(b, "\tint64_t dims[%d];\n\tint64_t ofs[%d];\n\tsize_t wscap;\n\tint dims_set;\n\tsize_t inb[%d], outb[%d];\n",
		           g->ndims, g->nws + 1, g->ninputs + 1, g->noutputs + 1);
	buf_puts(b, "};\n\n");
	if (w->size && !a->outweights)
		buf_printf(b, "extern \"C\" const unsigned char %s_weights_blob[] __attribute__((visibility(\"hidden\")));\n", nm);
	buf_printf(b, "#define DC_WEIGHTS_SIZE ((size_t)%zuu)\n#define DC_WORKSPACE_SIZE ((size_t)%lldu)\n", w->size, (long long)g->arena_size);
	buf_printf(b, "static const char dc_weights_sha[] = \"%s\";\n\n", w->sha);
	if (a->outweights)
		emit_weights_loader(b, nm);
	emit_desc_tables(&e);
	buf_puts(b, "\n");
	emit_status_decode(&e);
	buf_puts(b, g->nmsgs ? "#define DC_STATUS(m, st) dc_status((m), (st))\n" : "#define DC_STATUS(m, st) (st)\n");
	if (g->ndims) {
		/* set_dims: a larger device workspace; graphs and run_host's
		 * buffers were made for other dims (sizes and kernel arguments) */
		buf_printf(b, "static int dc_grow(%s_t *m, size_t n)\n{\n\tunsigned char *ws = NULL;\n"
		              "\tif (cudaMalloc((void **)&ws, n) != cudaSuccess) {\n\t\t(void)cudaGetLastError();\n\t\treturn DOCCC_ERR_NOMEM;\n\t}\n"
		              "\t(void)cudaFree(m->ws);\n\tm->ws = ws;\n\tm->wscap = n;\n\treturn DOCCC_OK;\n}\n\n", nm);
		buf_printf(b, "static void dc_moved(%s_t *m)\n{\n\tfor (int k = 0; k < DC_GRAPHS; k++)\n\t\tif (m->graphs[k].exec) {\n"
		              "\t\t\t(void)cudaGraphExecDestroy(m->graphs[k].exec);\n\t\t\tm->graphs[k].exec = NULL;\n\t\t}\n"
		              "\tfor (int i = 0; i < %d; i++) {\n\t\t(void)cudaFree(m->hin[i]);\n\t\tm->hin[i] = NULL;\n\t}\n"
		              "\tfor (int i = 0; i < %d; i++) {\n\t\t(void)cudaFree(m->hout[i]);\n\t\tm->hout[i] = NULL;\n\t}\n}\n\n",
		           nm, g->ninputs, g->noutputs);
		emit_dims_api(&e);
	}
	put_api(b, api_common, nm, g->ninputs, g->noutputs, g->ndims > 0);
	put_api(b, api_create, nm, g->ninputs, g->noutputs, g->ndims > 0);
	put_api(b, a->outweights ? api_weights_file : w->size ? api_weights_embedded : "\treturn DOCCC_OK;\n}\n\n", nm, g->ninputs,
	        g->noutputs, g->ndims > 0);
	put_api(b, api_rest, nm, g->ninputs, g->noutputs, g->ndims > 0);
	typed_run(&e, 0);
	typed_run(&e, 1);
	emit_dims_run_dims(&e);
	emit_strerror(&e);
	emit_descriptor(&e, a, w, "dc_run_generic",
	                arena_printf(g->arena, "1, \"%s\", %d, dc_run_host_generic, dc_set_stream, dc_sync, dc_last_error, dc_set_log,\n"
	                                       "\tdc_dev_alloc, dc_dev_free, dc_dev_copy,",
	                             t->kind == TG_CUDA ? "cuda" : "rocm", t->simulate), "\"C\" ");
	buf_puts(b, "#endif\n");
}

const Printer printer_gpu = {
	.name = "cuda",
	.emit_file = gpu_emit_file,
	.loop = gpu_loop,
	.block = gpu_block,
	.fail = gpu_fail,
	.step_status = 0,
	.step_params = "cudaStream_t dc_stream, int *dc_err",
	.step_args = "dc_stream, dc_err",
	.step_begin = gpu_step_begin,
};
