/*
 * emit_gpu.c - the GPU printer: one CUDA source for targets cuda and rocm
 * (HIP through doccc_gpu.h's name mapping) and for their simulation.
 *
 * Every step (a top-level child, emit.c) is a host function that launches
 * kernels on the run's stream. Which nodes become kernels, and how each
 * runs, is the gpu_plan pass's decision (ir/passes/gpu_plan.c, Node.gpu);
 * this printer prints the plan and decides nothing. The walker calls it
 * for each loop and block of the step:
 *
 *   - a node with a plan becomes one kernel and its launch: GK_GRID over
 *     the collapsed iteration space (each thread takes iterations dc_t =
 *     blockIdx.x * blockDim.x + threadIdx.x, then every gridDim.x *
 *     blockDim.x further, a grid-stride loop, recovers the k loop
 *     variables from dc_t and runs the body as scalar code), GK_TILED as
 *     shared-memory tiles (below), GK_COOP as one block per iteration
 *     (below), GK_REDUCE as one block reducing into private copies, and
 *     GK_SINGLE as one thread: correct, not fast;
 *   - a loop at step level without a plan is a host loop (a recurrent
 *     layer's time loop, schedule.c): its children's kernels are launched
 *     every iteration and take the loop's variable as a by-value parameter;
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
 * checked and turns into DOCCC_ERR_DEVICE with the runtime's message. It
 * and the instance's struct are real source, backends/rt/gpu_api.h and
 * gpu_model.h, printed after the macros that name the model (DC_API,
 * DC_NAME) and size it (DC_NIN, DC_NOUT, DC_NDIMS, DC_WEIGHTS, ...).
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
		int ro = emit_readonly(ct);
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
 * A GK_COOP plan (ir/passes/gpu_plan.c) runs one thread block per
 * iteration of the grid: each child of the row body takes its role,
 *
 *   split       its iterations dealt out to the block's threads, then a
 *               barrier;
 *   reduce      every thread reduces its share of the iterations from the
 *               identity into the row locals the plan names, then a
 *               shared-memory tree combines the partials and every thread
 *               adds them to the value from before the loop;
 *   redundant   every thread runs it in full and computes the same values
 *               (the row's scalar code between the loops).
 *
 * The barriers are uniform: every thread of a block walks the same
 * iterations.
 */
static const char *identity(Wcr op, Dtype dt)
{
	int fl = dt != DT_I64 && dt != DT_I32, w = dt == DT_I32;
	switch (op) {
	case W_SUM: return fl || w ? "0" : "(int64_t)0";
	case W_PROD: return fl || w ? "1" : "(int64_t)1";
	case W_MAX: return fl ? "-INFINITY" : w ? "INT32_MIN" : "INT64_MIN";
	case W_MIN: return fl ? "INFINITY" : w ? "INT32_MAX" : "INT64_MAX";
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
	return dt == DT_F32 ? "dc_shf" : dt == DT_F64 ? "dc_shd" : dt == DT_I32 ? "dc_shw" : "dc_shi";
}

/* The loop over this thread's share of k's iterations. */
static void split_loop(Em *e, Node *k)
{
	Sdfg *g = e->g;
	const char *v = e->sn[k->var];
	emit_line(e, "for (int64_t %s = %s + (int64_t)threadIdx.x * %lld; %s < %s; %s += (int64_t)blockDim.x * %lld) {", v,
	          emit_expr_str(e, k->lo), (long long)k->step, v, emit_expr_str(e, k->hi), v, (long long)k->step);
	e->ind++;
	emit_locals(e, k);
	emit_node(e, k->body);
	e->ind--;
	emit_line(e, "}");
	(void)g;
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

/* A ROLE_REDUCE child k, its reductions as the plan has them. */
static void coop_reduce(Em *e, const CoopKid *ck, Node *k)
{
	Sdfg *g = e->g;
	emit_line(e, "{ /* reduction shared by the block's threads */");
	e->ind++;
	for (int r = 0; r < ck->nred; r++) {
		Container *c = sdfg_c(g, ck->red[r]);
		int64_t n = sdfg_numel(g, ck->red[r]);
		emit_line(e, "%s dc_p%d[%lld];", emit_storage_type[c->dt], r, (long long)n);
		for (int64_t j = 0; j < n; j++) {
			Buf x = {0};
			element(e, &x, ck->red[r], j);
			emit_line(e, "dc_p%d[%lld] = %s;", r, (long long)j, x.s);
			emit_line(e, "%s = %s;", x.s, identity(ck->op[r], c->dt));
			buf_free(&x);
		}
	}
	split_loop(e, k);
	for (int r = 0; r < ck->nred; r++) {
		Container *c = sdfg_c(g, ck->red[r]);
		for (int64_t j = 0; j < sdfg_numel(g, ck->red[r]); j++) {
			Buf x = {0}, p = {0};
			element(e, &x, ck->red[r], j);
			buf_printf(&p, "dc_p%d[%lld]", r, (long long)j);
			emit_tree(e, ck->op[r], c->dt, x.s, x.s, p.s, 0);
			buf_free(&x), buf_free(&p);
		}
	}
	e->ind--;
	emit_line(e, "}");
}

/* The body of a cooperative kernel: iterations dealt out to blocks. */
static void coop_body(Em *e, const GpuPlan *p, const char *total)
{
	Sdfg *g = e->g;
	int need[NDTYPES] = {0};
	for (int i = 0; i < p->nkids; i++)
		for (int r = 0; r < p->kids[i].nred; r++)
			need[sdfg_c(g, p->kids[i].red[r])->dt] = 1;
	static const Dtype dts[] = {DT_F32, DT_F64, DT_I64, DT_I32};
	for (int i = 0; i < 4; i++)
		if (need[dts[i]])
			emit_line(e, "__shared__ %s %s[%d];", emit_storage_type[dts[i]], shared_name(dts[i]), p->block);
	emit_line(e, "const int64_t dc_n = %s;", total);
	emit_line(e, "for (int64_t dc_t = blockIdx.x; dc_t < dc_n; dc_t += gridDim.x) {");
	e->ind++;
}

static void coop_kids(Em *e, const GpuPlan *p, Node *row)
{
	Node *kids[GPU_MAXKIDS];
	DOCC_ASSERT(gpu_row_kids(row, kids, GPU_MAXKIDS) == p->nkids);
	for (int i = 0; i < p->nkids; i++) {
		switch (p->kids[i].role) {
		case ROLE_SPLIT:
			split_loop(e, kids[i]);
			emit_line(e, "__syncthreads();");
			break;
		case ROLE_REDUCE:
			coop_reduce(e, &p->kids[i], kids[i]);
			break;
		default:
			emit_node(e, kids[i]);
			break;
		}
	}
}

/* ---- tiled contractions -------------------------------------------------------------
 *
 * A GK_TILED plan runs the grid as square tiles of s x s outputs per block:
 * k goes in steps of GPU_TILE_K, each step's s x GPU_TILE_K slice of X and
 * GPU_TILE_K x s slice of Y loaded by the whole block into shared memory
 * (every operand read once per block instead of once per output), a
 * barrier, the partial products, a barrier; each thread fetches its share
 * of the next step's slices into registers before the products, so the
 * loads' latency overlaps them (on an H200, int8 ResNet-50 ran in 5.06 ms
 * with loads in flight together but fetched after the barrier). The
 * operands are printed by
 * the walker itself inside scopes that declare the loop variables they
 * use, so guards, views and strides need nothing new. Then each thread
 * takes its outputs, runs the row's init, adds its sum to acc and runs the
 * epilogue (bias, activation, residual: what fusion left in the row); a
 * warp's outputs are consecutive in y.
 *
 * The partial products, by the plan's mma:
 *
 *   fp32   256 threads (16 x 16): each keeps its r x r sums (r = s / 16) in
 *          registers, outputs x = lx + 16 i, y = ly + 16 j; per k, r values
 *          of X and of Y from shared memory, r^2 fused multiply-adds
 *   tf32   tensor cores (CUDA wmma), s = 64 (8 warps, two 16x16
 *          accumulator fragments each) or 32 (4 warps, one each): the
 *          slices are stored rounded to tf32 (dc_tf32, to nearest, ties
 *          away, as cvt.rna), fp32 sums; at the end the fragments go
 *          through shared memory to the threads' outputs, thread t taking
 *          elements t, t + threads, ... of the tile
 *   bf16   the same with the slices rounded to bfloat16 (dc_f2b, to
 *          nearest even)
 *   fp16   float16 operands, exact in fp16 fragments
 *   s8     int8 operands (the integer kernels) in int8 fragments, int32
 *          sums; a fragment's columns start 32 bytes apart (span), as
 *          wmma's loads require
 *   i32    int8 operands, int32 sums as fp32's r x r per thread
 */
static const struct {
	const char *elem;          /* shared-memory element type */
	const char *wmma;          /* the fragments' input type, NULL without tensor cores */
	const char *pre, *post;    /* rounding of an operand into elem */
	const char *sum, *zero;    /* the sums' type, its zero */
} mma_c[NMMAS] = {
	[MMA_FP32] = {"float", NULL, "", "", "float", "0.0f"},
	[MMA_TF32] = {"float", "nvcuda::wmma::precision::tf32", "dc_tf32(", ")", "float", "0.0f"},
	[MMA_BF16] = {"__nv_bfloat16", "__nv_bfloat16", "__ushort_as_bfloat16(dc_f2b(", "))", "float", "0.0f"},
	[MMA_FP16] = {"__half", "__half", "__ushort_as_half(dc_f2h(", "))", "float", "0.0f"},
	[MMA_S8] = {"signed char", "signed char", "(signed char)(", ")", "int", "0"},
	[MMA_I32] = {"signed char", NULL, "(signed char)(", ")", "int", "0"},
};

/* What the printer of a tiled kernel reads: the plan, the collapsed maps,
 * the row's children, the reduction nest's loops and its tasklet. */
typedef struct {
	const GpuPlan *p;
	Node *maps[MAXDIM];
	Node *kids[GPU_MAXKIDS];
	Node *chain[MAXDIM];
	const Tasklet *t;
} Tile;

static int64_t const_extent(Node *m)
{
	int64_t lo, hi;
	if (!ex_isint(m->lo, &lo) || !ex_isint(m->hi, &hi))
		return -1;
	return (hi - lo + m->step - 1) / m->step;
}

static void tile_of(const GpuPlan *p, Node *const *maps, Tile *tl)
{
	tl->p = p;
	memcpy(tl->maps, maps, sizeof(Node *) * (size_t)p->depth);
	DOCC_ASSERT(gpu_row_kids(maps[p->depth - 1]->body, tl->kids, GPU_MAXKIDS) == p->nkids);
	Node *k = tl->kids[p->red];
	for (int i = 0; i < p->nchain; i++, k = k->body->kids[0])
		tl->chain[i] = k;
	tl->t = &k->ts[0];
}

/* The cast of a tile's flat indices (never negative) for the divisions
 * that split them: unsigned 32-bit where every space fits, whose division
 * by a constant is a multiply and a shift, where int64's is a long
 * sequence, run for every element a tile loads. */
static const char *flat_cast(const GpuPlan *p)
{
	int64_t lim = (int64_t)1 << 31;
	return p->nx < lim && p->ny < lim && p->nk < lim && p->nb < lim ? "(uint32_t)" : "";
}

/* const int64_t declarations of the variables of maps m[0..n) (of group
 * grp, or all with grp < 0) from the flat index ix over them. */
static void decompose(Em *e, const GpuPlan *p, Node *const *m, const signed char *grps, int n, int grp, const char *ix)
{
	int64_t inner = 1;
	for (int i = n - 1; i >= 0; i--) {
		if (grp >= 0 && grps[i] != grp)
			continue;
		int64_t ext = const_extent(m[i]);
		emit_line(e, "const int64_t %s = %s + (int64_t)(%s(%s) / %lldu %% %lldu) * %lld;", e->sn[m[i]->var],
		          emit_expr_str(e, m[i]->lo), flat_cast(p), ix, (long long)inner, (long long)ext, (long long)m[i]->step);
		inner *= ext;
	}
}

/* One operand's slice for the k step at k0: rows (r) of the operand's own
 * space by GPU_TILE_K, this thread's share of it (a constant count,
 * threads dividing rows * GPU_TILE_K, unrolled so that its loads are in
 * flight at once) into its registers dc_ra (X) or dc_rb (Y). */
static void gemm_fetch(Em *e, const Tile *tl, int which, const char *k0)
{
	const GpuPlan *p = tl->p;
	int rows = p->tile;
	const char *reg = which ? "dc_rb" : "dc_ra", *n = which ? "dc_ny" : "dc_nx", *t0 = which ? "dc_ty" : "dc_tx";
	DOCC_ASSERT(rows * GPU_TILE_K % p->threads == 0);
	emit_line(e, "#pragma unroll");
	emit_line(e, "for (int dc_j = 0; dc_j < %d; dc_j++) {", rows * GPU_TILE_K / p->threads);
	e->ind++;
	emit_line(e, "const int dc_i = threadIdx.x + dc_j * %d;", p->threads);
	emit_line(e, "const int dc_r = dc_i / %d, dc_kk = dc_i %% %d;", GPU_TILE_K, GPU_TILE_K);
	emit_line(e, "const int64_t dc_o = %s * %d + dc_r, dc_k = %s + dc_kk;", t0, rows, k0);
	emit_line(e, "%s[dc_j] = %s;", reg, mma_c[p->mma].zero);
	emit_line(e, "if (dc_o < %s && dc_k < dc_nk) {", n);
	e->ind++;
	decompose(e, p, tl->maps, p->grp, p->depth, 0, "dc_tb");
	decompose(e, p, tl->maps, p->grp, p->depth, which ? 2 : 1, "dc_o");
	decompose(e, p, tl->chain, NULL, p->nchain, -1, "dc_k");
	Buf v = {0};
	emit_operand(e, &v, &tl->t->in[which], mma_info[p->mma].integer ? DT_I32 : DT_F32);
	emit_line(e, "%s[dc_j] = %s;", reg, v.s);
	buf_free(&v);
	e->ind--;
	emit_line(e, "}");
	e->ind--;
	emit_line(e, "}");
}

/* The registers into the operand's slice in shared memory, rounded to the
 * kind's element type. */
static void gemm_put(Em *e, const Tile *tl, int which)
{
	const GpuPlan *p = tl->p;
	const char *tile = which ? "dc_ys" : "dc_xs", *reg = which ? "dc_rb" : "dc_ra";
	emit_line(e, "#pragma unroll");
	emit_line(e, "for (int dc_j = 0; dc_j < %d; dc_j++) {", p->tile * GPU_TILE_K / p->threads);
	e->ind++;
	emit_line(e, "const int dc_i = threadIdx.x + dc_j * %d;", p->threads);
	emit_line(e, "const int dc_r = dc_i / %d, dc_kk = dc_i %% %d;", GPU_TILE_K, GPU_TILE_K);
	if (mma_info[p->mma].span != 16) /* fragment f's columns at f * span */
		emit_line(e, "%s[dc_kk][dc_r + dc_r / 16 * %d] = %s%s[dc_j]%s;", tile, mma_info[p->mma].span - 16, mma_c[p->mma].pre,
		          reg, mma_c[p->mma].post);
	else
		emit_line(e, "%s[dc_kk][dc_r] = %s%s[dc_j]%s;", tile, mma_c[p->mma].pre, reg, mma_c[p->mma].post);
	e->ind--;
	emit_line(e, "}");
}

/* The partial products of one k step from the slices in shared memory. */
static void gemm_products(Em *e, const GpuPlan *p)
{
	if (!mma_info[p->mma].tc) {
		emit_line(e, "for (int dc_kk = 0; dc_kk < %d; dc_kk++) {", GPU_TILE_K);
		emit_line(e, "\t%s dc_a[%d], dc_c[%d];", mma_c[p->mma].sum, p->r, p->r);
		emit_line(e, "\t#pragma unroll");
		emit_line(e, "\tfor (int dc_i = 0; dc_i < %d; dc_i++) {", p->r);
		emit_line(e, "\t\tdc_a[dc_i] = dc_xs[dc_kk][dc_lx + 16 * dc_i];");
		emit_line(e, "\t\tdc_c[dc_i] = dc_ys[dc_kk][dc_ly + 16 * dc_i];");
		emit_line(e, "\t}");
		emit_line(e, "\t#pragma unroll");
		emit_line(e, "\tfor (int dc_i = 0; dc_i < %d; dc_i++)", p->r);
		emit_line(e, "\t\t#pragma unroll");
		emit_line(e, "\t\tfor (int dc_j = 0; dc_j < %d; dc_j++)", p->r);
		emit_line(e, "\t\t\tdc_acc[dc_i][dc_j] += dc_a[dc_i] * dc_c[dc_j];");
		emit_line(e, "}");
		return;
	}
	const char *T = mma_c[p->mma].wmma;
	int k = mma_info[p->mma].k, row = mma_row(p->mma, p->tile), span = mma_info[p->mma].span;
	emit_line(e, "#pragma unroll");
	emit_line(e, "for (int dc_kk = 0; dc_kk < %d; dc_kk += %d) {", GPU_TILE_K, k);
	e->ind++;
	emit_line(e, "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, %d, %s, nvcuda::wmma::col_major> dc_fa;", k, T);
	emit_line(e, "nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, %d, %s, nvcuda::wmma::row_major> dc_fb;", k, T);
	emit_line(e, "nvcuda::wmma::load_matrix_sync(dc_fa, &dc_xs[dc_kk][dc_fm * %d], %d);", span, row);
	emit_line(e, "#pragma unroll");
	emit_line(e, "for (int dc_f = 0; dc_f < %d; dc_f++) {", p->r);
	emit_line(e, "\tnvcuda::wmma::load_matrix_sync(dc_fb, &dc_ys[dc_kk][(dc_fn + dc_f) * %d], %d);", span, row);
	emit_line(e, "\tnvcuda::wmma::mma_sync(dc_c[dc_f], dc_fa, dc_fb, dc_c[dc_f]);");
	emit_line(e, "}");
	e->ind--;
	emit_line(e, "}");
}

/* The thread's outputs (dc_e of s * s / threads): each one's row
 * variables, in the row's order, then the row's own code with acc += the
 * sum. */
static void gemm_epilogue(Em *e, const Tile *tl)
{
	const GpuPlan *p = tl->p;
	int tc = mma_info[p->mma].tc;
	emit_line(e, "#pragma unroll");
	emit_line(e, "for (int dc_e = 0; dc_e < %d; dc_e++) {", p->tile * p->tile / p->threads);
	e->ind++;
	if (tc)
		emit_line(e, "const int dc_i = (dc_e * %d + threadIdx.x) / %d, dc_j = (dc_e * %d + threadIdx.x) %% %d;", p->threads,
		          p->tile, p->threads, p->tile);
	else
		emit_line(e, "const int dc_i = dc_lx + 16 * (dc_e / %d), dc_j = dc_ly + 16 * (dc_e %% %d);", p->r, p->r);
	emit_line(e, "const int64_t dc_x = dc_tx * %d + dc_i, dc_y = dc_ty * %d + dc_j;", p->tile, p->tile);
	emit_line(e, "if (dc_x < dc_nx && dc_y < dc_ny) {");
	e->ind++;
	if (tc)
		emit_line(e, "const %s dc_sum = dc_cs[dc_i][dc_j];", mma_c[p->mma].sum);
	else
		emit_line(e, "const %s dc_sum = dc_acc[dc_e / %d][dc_e %% %d];", mma_c[p->mma].sum, p->r, p->r);
	for (int i = 0; i < p->depth; i++) {
		const char *ix = p->grp[i] == 1 ? "dc_x" : p->grp[i] == 2 ? "dc_y" : "dc_tb";
		int64_t inner = 1;
		for (int j = i + 1; j < p->depth; j++)
			if (p->grp[j] == p->grp[i])
				inner *= const_extent(tl->maps[j]);
		emit_line(e, "const int64_t %s = %s + (int64_t)(%s(%s) / %lldu %% %lldu) * %lld;", e->sn[tl->maps[i]->var],
		          emit_expr_str(e, tl->maps[i]->lo), flat_cast(p), ix, (long long)inner,
		          (long long)const_extent(tl->maps[i]), (long long)tl->maps[i]->step);
	}
	for (int i = 0; i < p->depth; i++)
		emit_locals(e, tl->maps[i]);
	for (int i = 0; i < p->red; i++)
		emit_node(e, tl->kids[i]);
	emit_line(e, "{");
	e->ind++;
	for (int i = 0; i < p->nchain; i++)
		if (const_extent(tl->chain[i]) == 1)
			emit_line(e, "const int64_t %s = %s;", e->sn[tl->chain[i]->var], emit_expr_str(e, tl->chain[i]->lo));
	Buf lv = {0};
	emit_lvalue(e, &lv, &tl->t->out);
	emit_line(e, "%s += dc_sum;", lv.s);
	buf_free(&lv);
	e->ind--;
	emit_line(e, "}");
	for (int i = p->red + 1; i < p->nkids; i++)
		emit_node(e, tl->kids[i]);
	e->ind--;
	emit_line(e, "}");
	e->ind--;
	emit_line(e, "}");
}

static void gemm_body(Em *e, const Tile *tl)
{
	const GpuPlan *p = tl->p;
	int64_t tx = (p->nx + p->tile - 1) / p->tile, ty = (p->ny + p->tile - 1) / p->tile;
	int tc = mma_info[p->mma].tc, row = mma_row(p->mma, p->tile);
	const char *T = mma_c[p->mma].elem, *al = tc ? "__align__(32) " : "", *S = mma_c[p->mma].sum;
	if (tc)
		e->wmma = 1;
	emit_line(e, "__shared__ %s%s dc_xs[%d][%d];", al, T, GPU_TILE_K, row);
	emit_line(e, "__shared__ %s%s dc_ys[%d][%d];", al, T, GPU_TILE_K, row);
	if (tc)
		emit_line(e, "__shared__ __align__(32) %s dc_cs[%d][%d];", S, p->tile, p->tile + 4);
	emit_line(e, "const int64_t dc_nx = %lld, dc_ny = %lld, dc_nk = %lld;", (long long)p->nx, (long long)p->ny,
	          (long long)p->nk);
	if (tc) /* warp w: fragment row w / (s / 16 / r), columns r (w % (s / 16 / r)) + [0, r) */
		emit_line(e, "const int dc_fm = threadIdx.x / 32 / %d, dc_fn = threadIdx.x / 32 %% %d * %d;", p->tile / 16 / p->r,
		          p->tile / 16 / p->r, p->r);
	else
		emit_line(e, "const int dc_lx = threadIdx.x / 16, dc_ly = threadIdx.x %% 16;");
	emit_line(e, "for (int64_t dc_b = blockIdx.x; dc_b < %lld; dc_b += gridDim.x) {", (long long)(p->nb * tx * ty));
	e->ind++;
	emit_line(e, "const int64_t dc_tb = dc_b / %lld, dc_tx = dc_b / %lld %% %lld, dc_ty = dc_b %% %lld;", (long long)(tx * ty),
	          (long long)ty, (long long)tx, (long long)ty);
	if (tc) {
		emit_line(e, "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, %d, %s> dc_c[%d];", mma_info[p->mma].k, S,
		          p->r);
		emit_line(e, "#pragma unroll");
		emit_line(e, "for (int dc_f = 0; dc_f < %d; dc_f++)", p->r);
		emit_line(e, "\tnvcuda::wmma::fill_fragment(dc_c[dc_f], %s);", mma_c[p->mma].zero);
	} else {
		emit_line(e, "%s dc_acc[%d][%d];", S, p->r, p->r);
		emit_line(e, "#pragma unroll");
		emit_line(e, "for (int dc_e = 0; dc_e < %d; dc_e++)", p->r * p->r);
		emit_line(e, "\tdc_acc[dc_e / %d][dc_e %% %d] = %s;", p->r, p->r, mma_c[p->mma].zero);
	}
	/* step k0's slices were fetched into registers during step k0 - 1's
	 * products (the first before the loop) */
	int nr = p->tile * GPU_TILE_K / p->threads;
	emit_line(e, "%s dc_ra[%d], dc_rb[%d];", S, nr, nr);
	gemm_fetch(e, tl, 0, "(int64_t)0");
	gemm_fetch(e, tl, 1, "(int64_t)0");
	emit_line(e, "for (int64_t dc_k0 = 0; dc_k0 < dc_nk; dc_k0 += %d) {", GPU_TILE_K);
	e->ind++;
	gemm_put(e, tl, 0);
	gemm_put(e, tl, 1);
	emit_line(e, "__syncthreads();");
	emit_line(e, "if (dc_k0 + %d < dc_nk) {", GPU_TILE_K);
	e->ind++;
	gemm_fetch(e, tl, 0, arena_printf(e->g->arena, "(dc_k0 + %d)", GPU_TILE_K));
	gemm_fetch(e, tl, 1, arena_printf(e->g->arena, "(dc_k0 + %d)", GPU_TILE_K));
	e->ind--;
	emit_line(e, "}");
	gemm_products(e, p);
	emit_line(e, "__syncthreads();");
	e->ind--;
	emit_line(e, "}");
	if (tc) {
		emit_line(e, "#pragma unroll");
		emit_line(e, "for (int dc_f = 0; dc_f < %d; dc_f++)", p->r);
		emit_line(e, "\tnvcuda::wmma::store_matrix_sync(&dc_cs[dc_fm * 16][(dc_fn + dc_f) * 16], dc_c[dc_f], %d, "
		             "nvcuda::wmma::mem_row_major);", p->tile + 4);
		emit_line(e, "__syncthreads();");
	}
	gemm_epilogue(e, tl);
	if (tc)
		emit_line(e, "__syncthreads(); /* dc_cs is read before the next tile's fragments land */");
	e->ind--;
	emit_line(e, "}");
}


/* ---- launches --------------------------------------------------------------------------- */

/* The launch of n's kernel at e's position: DC_LAUNCH, or DC_LAUNCH_SYNC
 * for kernels with barriers, on the plan's grid (a C expression when it
 * depends on the run-time dims: iterations total) and block. */
static void launch(Em *e, const GpuPlan *p, const char *total, const char *args)
{
	int sync = p->kind == GK_TILED || p->kind == GK_COOP || p->kind == GK_REDUCE;
	const char *grid;
	if (p->grid >= 0)
		grid = arena_printf(e->g->arena, "%lld", (long long)p->grid);
	else
		grid = arena_printf(e->g->arena, "(unsigned)((%s) + %d - 1) / %d < %lld ? (unsigned)(((%s) + %d - 1) / %d) : %lld",
		                    total, p->block, p->block, (long long)p->grid_cap, total, p->block, p->block,
		                    (long long)p->grid_cap);
	if (p->grid < 0) {
		emit_line(e, "if ((%s) > 0)", total);
		e->ind++;
	}
	emit_line(e, "%s(%s_k%d, dim3(%s), dim3(%d), dc_stream%s);", sync ? "DC_LAUNCH_SYNC" : "DC_LAUNCH", e->nm, p->kernel, grid,
	          p->block, args);
	e->ind -= p->grid < 0;
}

/* The kernel of n as its plan says (a grid, a tiled contraction, a
 * cooperative block or one thread), its launch printed at e's position. */
static void gpu_kernel(Em *e, Node *n)
{
	Sdfg *g = e->g;
	const GpuPlan *p = n->gpu;
	int depth = p->kind == GK_SINGLE ? 0 : p->depth;
	Node *maps[MAXDIM] = {n};
	for (int i = 1; i < depth; i++)
		maps[i] = maps[i - 1]->body->kids[0];
	DOCC_ASSERT(e->nkern == p->kernel);
	e->nkern++;
	Buf params = {0}, args = {0};
	kernel_params(e, n, &params, &args);
	Expr *ext[MAXDIM], *total = ex_int(g, 1);
	for (int i = 0; i < depth; i++) {
		ext[i] = extent(g, maps[i]);
		total = ex_mul(g, total, ext[i]);
	}
	KFrame kf = kernel_open(e, p->kernel, &params);
	host_vars_used(e, n);
	if (p->kind == GK_TILED) {
		Tile tl;
		tile_of(p, maps, &tl);
		gemm_body(e, &tl);
	} else if (p->kind == GK_COOP)
		coop_body(e, p, emit_expr_str(e, total));
	else if (depth) {
		emit_line(e, "const int64_t dc_n = %s;", emit_expr_str(e, total));
		emit_line(e, "for (int64_t dc_t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; dc_t < dc_n; "
		             "dc_t += (int64_t)gridDim.x * blockDim.x) {");
		e->ind++;
	}
	if (depth && p->kind != GK_TILED) {
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
		if (p->kind == GK_COOP)
			coop_kids(e, p, maps[depth - 1]->body);
		else
			emit_node(e, maps[depth - 1]->body);
		e->ind--;
		emit_line(e, "}");
	} else if (!depth)
		emit_node(e, n);
	kernel_close(e, kf);
	if (p->grid == 0)
		emit_line(e, "/* %s_k%d: empty grid */", e->nm, p->kernel);
	else
		launch(e, p, emit_expr_str(e, total), args.len ? args.s : "");
	buf_free(&params);
	buf_free(&args);
}

/* A GK_REDUCE plan: the nest's iterations dealt out to one block's threads,
 * each reducing into a private copy of acc from the identity, then the
 * shared-memory tree, and thread 0 folds the result into acc. */
static void greduce_kernel(Em *e, Node *n)
{
	Sdfg *g = e->g;
	const GpuPlan *p = n->gpu;
	Node *loops[MAXDIM], *k = n;
	for (int i = 0; i < p->depth; i++, k = k->body->kids[0])
		loops[i] = k;
	DOCC_ASSERT(e->nkern == p->kernel);
	e->nkern++;
	Buf params = {0}, args = {0};
	kernel_params(e, n, &params, &args);
	Container *acc = sdfg_c(g, p->acc);
	int64_t numel = sdfg_numel(g, p->acc);
	Expr *ext[MAXDIM], *total = ex_int(g, 1);
	for (int i = 0; i < p->depth; i++) {
		ext[i] = extent(g, loops[i]);
		total = ex_mul(g, total, ext[i]);
	}
	KFrame kf = kernel_open(e, p->kernel, &params);
	host_vars_used(e, n);
	const char *T = emit_storage_type[acc->dt], *an = e->cn[p->acc];
	emit_line(e, "__shared__ %s %s[%d];", T, shared_name(acc->dt), p->block);
	if (acc->rank == 0)
		emit_line(e, "%s l_%s = %s;", T, an, identity(p->op, acc->dt));
	else {
		emit_line(e, "%s l_%s[%lld];", T, an, (long long)numel);
		emit_line(e, "for (int dc_j = 0; dc_j < %lld; dc_j++)", (long long)numel);
		emit_line(e, "\tl_%s[dc_j] = %s;", an, identity(p->op, acc->dt));
	}
	emit_line(e, "for (int64_t dc_t = threadIdx.x; dc_t < %s; dc_t += blockDim.x) {", emit_expr_str(e, total));
	e->ind++;
	for (int i = 0; i < p->depth; i++) {
		Expr *inner = ex_int(g, 1);
		for (int j = i + 1; j < p->depth; j++)
			inner = ex_mul(g, inner, ext[j]);
		emit_line(e, "const int64_t %s = %s + (dc_t / (%s) %% (%s)) * %lld;", e->sn[loops[i]->var],
		          emit_expr_str(e, loops[i]->lo), emit_expr_str(e, inner), emit_expr_str(e, ext[i]), (long long)loops[i]->step);
	}
	for (int i = 0; i < p->depth; i++)
		emit_locals(e, loops[i]);
	/* the body accumulates into the thread's copy: acc prints as a local */
	e->as_local = p->acc;
	emit_node(e, k);
	e->as_local = -1;
	e->ind--;
	emit_line(e, "}");
	for (int64_t j = 0; j < numel; j++) {
		char mine[96], out[96];
		if (acc->rank == 0)
			snprintf(mine, sizeof mine, "l_%s", an);
		else
			snprintf(mine, sizeof mine, "l_%s[%lld]", an, (long long)j);
		snprintf(out, sizeof out, "v_%s[%lld]", an, (long long)j);
		emit_tree(e, p->op, acc->dt, mine, out, out, 1);
	}
	kernel_close(e, kf);
	launch(e, p, "1", args.len ? args.s : "");
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

/* A loop: inside a kernel a plain loop; on the host a kernel as planned,
 * or, without a plan, a host loop (its kernels launched every iteration). */
static void gpu_loop(Em *e, Node *n)
{
	if (e->inkern || !n->gpu)
		gpu_plain_loop(e, n);
	else if (n->gpu->kind == GK_REDUCE)
		greduce_kernel(e, n);
	else
		gpu_kernel(e, n);
}

static void gpu_block(Em *e, Node *n)
{
	if (!e->inkern) {
		gpu_kernel(e, n);
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
	emit_line(e, "static void %s_forward(const unsigned char *dc_W, unsigned char *dc_ws,%s cudaStream_t dc_stream, int *dc_err,",
	          e->nm, g->nstates ? " unsigned char *dc_st," : "");
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
		const char *fn = emit_step(e, k, set);
		if (e->stepfn)
			e->stepfn[i] = fn;
		e->ind--;
		emit_line(e, "}");
	}
	e->ind--;
	emit_line(e, "}");
	buf_puts(e->b, "\n");
}

/* NAME_run or NAME_run_host with typed pointers. */
static void typed_run(Em *e, int host)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	const char *nm = e->nm;
	buf_printf(b, "int %s_run%s(%s_t *model", nm, host ? "_host" : "", nm);
	for (int i = 0; i < g->ninputs; i++)
		buf_printf(b, ", %s%s *in%d", emit_readonly(sdfg_c(g, g->inputs[i])) ? "const " : "",
		           emit_storage_type[sdfg_c(g, g->inputs[i])->dt], i);
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
	/* the model's names for the runtime sources (rt/gpu_api.h) */
	buf_printf(b, "#define DC_MODEL %s\n#define DC_API(f) %s_##f\n#define DC_NAME \"%s\"\n", nm, nm, nm);
	/* the CPU's helpers as device functions */
	buf_puts(b, "#define DC_INLINE static __device__ inline\n");
	buf_puts(b, rt_body("scalar.h"));
	if (e.wmma)
		buf_puts(b, rt_body("tf32.h"));
	buf_puts(b, "\n");
	if (kern.len)
		buf_puts(b, kern.s);
	buf_puts(b, fwd.s);
	buf_free(&kern);
	buf_free(&fwd);

	/* host code only from here: HIP's device pass must not see the
	 * descriptor's references to host functions */
	buf_puts(b, "#if !defined(__HIP_DEVICE_COMPILE__)\n");
	/* the instance (rt/gpu_model.h) and the API (rt/gpu_api.h) take these */
	buf_printf(b, "#define DC_NIN %d\n#define DC_NOUT %d\n#define DC_NDIMS %d\n#define DC_NWS %d\n"
	              "#define DC_WEIGHTS %d /* 0 none, 1 embedded, 2 a weights file */\n",
	           g->ninputs, g->noutputs, g->ndims, g->nws, !w->size ? 0 : a->outweights ? 2 : 1);
	for (int i = 0, any = 0; i < g->ninputs && !any; i++) /* run_host copies the inputs the program writes back */
		if ((any = sdfg_c(g, g->inputs[i])->written)) {
			buf_puts(b, "static const int dc_in_written[] = {");
			for (int j = 0; j < g->ninputs; j++)
				buf_printf(b, "%s%d", j ? ", " : "", sdfg_c(g, g->inputs[j])->written);
			buf_puts(b, "};\n#define DC_IN_WRITTEN(i) dc_in_written[i]\n");
		}
	if (g->nstates) /* the forward's state argument (rt/gpu_api.h) */
		buf_printf(b, "#define DC_NSTATES %d\n#define DC_STATE_SIZE ((size_t)%lldu)\n#define DC_STATE_ARG(m) , (m)->st\n",
		           g->nstates, (long long)g->state_size);

	buf_puts(b, rt_body("gpu_model.h"));
	buf_puts(b, "\n");
	buf_printf(b, "#define DC_WEIGHTS_SIZE ((size_t)%zuu)\n#define DC_WORKSPACE_SIZE ((size_t)%lldu)\n", w->size, (long long)g->arena_size);
	buf_printf(b, "static const char dc_weights_sha[] = \"%s\";\n\n", w->sha);
	if (a->outweights)
		emit_weights_loader(b);
	emit_desc_tables(&e);
	buf_puts(b, "\n");
	emit_status_decode(&e);
	buf_puts(b, g->nmsgs ? "#define DC_STATUS(m, st) dc_status((m), (st))\n" : "#define DC_STATUS(m, st) (st)\n");
	if (g->ndims)
		emit_dims_api(&e);
	buf_puts(b, rt_body("gpu_api.h"));
	emit_state_api(&e);
	typed_run(&e, 0);
	typed_run(&e, 1);
	emit_dims_run_dims(&e);
	emit_strerror(&e);
	emit_descriptor(&e, a, w, "dc_run_generic",
	                arena_printf(g->arena, "1, \"%s\", %d, dc_run_host_generic, dc_set_stream, dc_sync, dc_last_error, dc_set_log,\n"
	                                       "\tdc_dev_alloc, dc_dev_free, dc_dev_copy,",
	                             backend_of(t)->device, t->simulate), "\"C\" ");
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
