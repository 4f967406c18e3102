/*
 * gpu_plan.c - how each step runs on a GPU: kernel forms, tiles, blocks.
 *
 * On the GPU targets (cuda, rocm) the schedule pass has marked grids (the
 * outermost perfectly nested maps of a step, SCHED_GPU_THREAD, collapse
 * k). This pass walks what the host walks, each step's children and the
 * bodies of host loops, and gives every node that becomes a kernel a
 * GpuPlan (ir.h), in the order the kernels are printed:
 *
 *   tiled    a grid whose row body holds one loop nest doing only
 *            acc += X * Y (float32 sums of float32, float16 or bfloat16
 *            operands, or int32 sums of int8; acc a local of the row) and whose x space (the maps
 *            only X indexes with), y space (only Y) and k are at least
 *            GT_MIN, GT_MIN and GPU_TILE_K: a GEMM, a convolution over its
 *            padded input, a batched matmul. Square tiles of side s per
 *            block: 64, 32 or 16 (tensor cores: 64 or 32), the largest
 *            whose tiles still give every SM a block (an H200 has 132),
 *            else the smallest; 256 threads for fp32 (r x r sums each, r =
 *            s / 16), tensor cores 256 for s = 64 (8 warps, 2 fragments
 *            each) and 128 for 32 (gpu_tile_shape; on an H200 one warp's
 *            int8 tiles of 16 ran ResNet-50 1.6x slower than 32's). The
 *            partial products: fp32 FMAs
 *            (contraction_precision highest), tf32 tensor cores (high),
 *            bf16 (medium, and bfloat16 models), fp16 (float16 models, at
 *            every precision); only CUDA sm_80 and later have tensor cores.
 *            The integer kernels' int32 sums of int8 products (integer.c)
 *            tile the same way: int8 tensor cores (s8), or int32
 *            multiply-adds (i32) where there are none; both exact.
 *   coop     a grid of at most the category's grid cap iterations (a
 *            layer norm or softmax over rows, a GEMV at batch 1): a block
 *            per iteration, each child of the row body given a role:
 *              split      an N_MAP that stores only to global memory
 *                         without wcr (and to locals of its own): its
 *                         iterations dealt out to the block's threads;
 *              reduce     an N_MAP or N_FOR whose only stores outside its
 *                         own locals are reductions into locals of the row
 *                         (wcr +=, *=, max=, min=, or the read-modify-write
 *                         "l = l op x" of a scalar accumulator nothing else
 *                         in the loop reads), float32, float64, int64 or
 *                         int32 (the integer kernels' GEMVs), at
 *                         most 16 elements: each thread reduces its share,
 *                         a shared-memory tree combines them;
 *              redundant  anything else without wcr into global memory:
 *                         every thread runs it in full;
 *            a child with wcr into global memory keeps the grid, and so
 *            does a row where no split or reduced loop has 32 iterations.
 *   grid     any other grid: a thread per iteration, grid-stride, the
 *            grid min(ceil(iterations / block), cap) (or computed at run
 *            time from the run-time dims).
 *   reduce   a step-level loop nest (not a grid) that only accumulates
 *            into one small global container ("acc[j] = acc[j] op x", the
 *            only read of acc in the nest, at indices free of the nest's
 *            variables: a sum or max of a whole tensor): one block, each
 *            thread reducing a private copy, a tree at the end.
 *   single   anything else: one thread. Correct, not fast.
 *
 * The parameters are pass options (--list-passes): whether tiles,
 * cooperative blocks and block reductions are used, the tile's side, the
 * threads per block, and whether tensor cores may be used. Reassociating
 * a floating-point reduction changes its rounding a little; 16-bit
 * accumulators, which round at every step, are left alone. On the CPU
 * targets the pass does nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "../ir.h"

const char *const gpu_kind_name[NGPUKINDS] = {"grid", "tiled", "cooperative", "reduce", "single"};
const char *const coop_role_name[] = {[ROLE_REDUNDANT] = "redundant", [ROLE_SPLIT] = "split", [ROLE_REDUCE] = "reduce"};
_Static_assert(COUNTOF(coop_role_name) == ROLE_REDUCE + 1, "coop_role_name out of step with CoopRole");
const MmaInfo mma_info[NMMAS] = {
	[MMA_FP32] = {"fp32", 4, 0, 1, 0, 0, 16},
	[MMA_TF32] = {"tf32", 4, 8, 4, 1, 0, 16},
	[MMA_BF16] = {"bf16", 2, 16, 8, 1, 0, 16},
	[MMA_FP16] = {"fp16", 2, 16, 8, 1, 0, 16},
	[MMA_S8] = {"s8", 1, 16, 16, 1, 1, 32},
	[MMA_I32] = {"i32", 1, 0, 4, 0, 1, 16},
};

int gpu_tile_shape(Mma m, int s, int *threads, int *r)
{
	int tc = mma_info[m].tc;
	if ((s != 16 && s != 32 && s != 64) || (tc && s < 32))
		return 0;
	*threads = tc && s == 32 ? 128 : 256;
	*r = !tc ? s / 16 : s == 64 ? 2 : 1;
	return 1;
}

enum { GT_MIN = 16 };

typedef struct {
	Sdfg *g;
	const Target *t;
	int tiled, coop, reduce, tc;
	int tile;                 /* 0: the rule above */
	int block;
	int kernels;              /* of the step being planned */
} Planner;

static int64_t const_extent(const Node *m)
{
	int64_t lo, hi;
	if (!ex_isint(m->lo, &lo) || !ex_isint(m->hi, &hi))
		return -1;
	return (hi - lo + m->step - 1) / m->step;
}

static Expr *extent(Sdfg *g, const Node *m)
{
	return ex_div(g, ex_addi(g, ex_sub(g, m->hi, m->lo), m->step - 1), ex_int(g, m->step));
}

static void flatten(Node *n, Node **kids, int *nkids, int max, int *ok)
{
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			flatten(n->kids[i], kids, nkids, max, ok);
		return;
	}
	if (*nkids == max) {
		*ok = 0;
		return;
	}
	kids[(*nkids)++] = n;
}

int gpu_row_kids(Node *body, Node **kids, int max)
{
	int n = 0, ok = 1;
	flatten(body, kids, &n, max, &ok);
	return ok ? n : -1;
}

/* Is container c a local of one of the row's maps? */
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

/* ---- cooperative blocks ------------------------------------------------------------ */

static int add_red(CoopKid *k, int c, Wcr op)
{
	for (int i = 0; i < k->nred; i++)
		if (k->red[i] == c)
			return k->op[i] == op;
	if (k->nred == GPU_MAXRED)
		return 0;
	k->red[k->nred] = c;
	k->op[k->nred++] = op;
	return 1;
}

/* Stores in subtree n of loop L of the row (maps[0..depth)): flags 1 a
 * global store, 2 a global wcr or value-indexed store, 4 a row-local store
 * that is not a reduction over L's variable (reductions go to k). */
static int store_flags(Sdfg *g, Node *const *maps, int depth, CoopKid *k, Node *L, const Node *n)
{
	int f = 0;
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			f |= store_flags(g, maps, depth, k, L, n->kids[i]);
		return f;
	}
	if (n->kind != N_BLOCK)
		return store_flags(g, maps, depth, k, L, n->body);
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
		if (!row_local(g, t->out.data, maps, depth))
			continue; /* a temporary of the loop's own */
		int dep = value_ix;
		for (int d = 0; d < c->rank; d++)
			dep |= L && ex_uses(t->out.idx[d], L->var);
		Dtype dt = c->dt;
		int okdt = dt == DT_F32 || dt == DT_F64 || dt == DT_I64 || dt == DT_I32;
		Wcr op = t->wcr;
		if (op == W_NONE && L && L->kind == N_FOR && c->rank == 0 && t->nin == 2 && t->dt == dt) {
			/* l = l op x, the only read of l in the loop */
			op = rmw_op(t->code);
			int self = -1;
			for (int j = 0; j < 2; j++)
				if (t->in[j].kind == OPD_MEM && t->in[j].m.data == t->out.data && !t->in[j].guard)
					self = j;
			if (self < 0 || count_reads(g, L->body, t->out.data) != 1)
				op = W_NONE;
		}
		else if (op != W_NONE && L && count_reads(g, L->body, t->out.data))
			op = W_NONE; /* the loop reads the partial value */
		if (!L || op == W_NONE || dep || !okdt || sdfg_numel(g, t->out.data) > 16 || !add_red(k, t->out.data, op))
			f |= 4;
	}
	return f;
}

/* The cooperative form of the grid maps[0..depth) of total iterations,
 * into p; 0 if it is not worth it or not possible. */
static int plan_coop(Planner *P, GpuPlan *p, Node **maps, int depth, int64_t total)
{
	Sdfg *g = P->g;
	if (total > P->t->gpu_max_blocks || total < 1)
		return 0;
	Node *kids[GPU_MAXKIDS];
	int nkids = gpu_row_kids(maps[depth - 1]->body, kids, GPU_MAXKIDS), worth = 0;
	if (nkids < 0)
		return 0;
	CoopKid *ck = arena_alloc(g->arena, sizeof *ck * (size_t)(nkids + 1));
	for (int i = 0; i < nkids; i++) {
		Node *k = kids[i];
		CoopKid r = {0};
		int loop = k->kind == N_MAP || k->kind == N_FOR;
		int f = store_flags(g, maps, depth, &r, loop ? k : NULL, k);
		if (f & 2)
			return 0;
		int64_t n = loop ? const_extent(k) : -1;
		if (loop && !(f & 4) && r.nred && !(f & 1))
			r.role = ROLE_REDUCE;
		else if (k->kind == N_MAP && !(f & 4) && !r.nred)
			r.role = ROLE_SPLIT;
		else
			r.role = ROLE_REDUNDANT;
		if (r.role != ROLE_REDUCE)
			r.nred = 0;
		ck[i] = r;
		worth |= r.role != ROLE_REDUNDANT && n >= 32;
	}
	if (!worth)
		return 0;
	p->kind = GK_COOP;
	p->nkids = nkids;
	p->kids = ck;
	p->block = P->block;
	p->grid = total < P->t->gpu_max_blocks ? total : P->t->gpu_max_blocks;
	return 1;
}

/* ---- tiled contractions ------------------------------------------------------------ */

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

static int int8_operand(Sdfg *g, const Operand *o)
{
	return o->kind == OPD_MEM && sdfg_c(g, o->m.data)->dt == DT_I8;
}

/* Is tasklet c the products a tile takes: float32 sums of float operands,
 * or int32 sums of int8 operands (the integer kernels)? */
static int tile_products(Sdfg *g, const Tasklet *c)
{
	if (!c->store || c->wcr != W_SUM || c->code != T_MUL || c->bind >= 0 || c->nin != 2)
		return 0;
	if (c->dt == DT_I32)
		return int8_operand(g, &c->in[0]) && int8_operand(g, &c->in[1]);
	return c->dt == DT_F32 && float_operand(g, &c->in[0]) && float_operand(g, &c->in[1]);
}

/* The partial products of operands x and y on the target. */
static Mma mma_of(Planner *P, const Operand *x, const Operand *y)
{
	Dtype dx = sdfg_c(P->g, x->m.data)->dt, dy = sdfg_c(P->g, y->m.data)->dt;
	if (dx == DT_I8)
		return P->t->gpu_tc && P->tc ? MMA_S8 : MMA_I32;
	if (!P->t->gpu_tc || !P->tc)
		return MMA_FP32;
	if (dx == DT_F16 && dy == DT_F16)
		return MMA_FP16;
	if ((dx == DT_BF16 && dy == DT_BF16) || P->t->precision == CP_MEDIUM)
		return MMA_BF16;
	return P->t->precision == CP_HIGH ? MMA_TF32 : MMA_FP32;
}

static int64_t tiles(const GpuPlan *p, int64_t s)
{
	return p->nb * ((p->nx + s - 1) / s) * ((p->ny + s - 1) / s);
}

/* The tile: the largest side whose tiles fill the SMs, else the smallest
 * (or the option's side, 32 at least on tensor cores). */
static void choose_tile(Planner *P, GpuPlan *p)
{
	int s = 64, min = mma_info[p->mma].tc ? 32 : 16;
	if (P->tile)
		s = P->tile < min ? min : P->tile;
	else
		while (s > min && tiles(p, s) < P->t->gpu_sms)
			s /= 2;
	p->tile = s;
	DOCC_ASSERT(gpu_tile_shape(p->mma, s, &p->threads, &p->r));
}

static int plan_tiled(Planner *P, GpuPlan *p, Node **maps, int depth)
{
	Sdfg *g = P->g;
	Node *kids[GPU_MAXKIDS], *chain[MAXDIM];
	int nkids = gpu_row_kids(maps[depth - 1]->body, kids, GPU_MAXKIDS), red = -1, nchain = 0;
	if (nkids < 0)
		return 0;
	/* the reduction nest: the first child made of perfectly nested
	 * rectangular loops around one tasklet acc += X * Y */
	const Tasklet *t = NULL;
	int64_t nk = 1;
	for (int i = 0; i < nkids && red < 0; i++) {
		Node *k = kids[i];
		nchain = 0;
		nk = 1;
		while (k->kind == N_MAP || k->kind == N_FOR) {
			int64_t n = const_extent(k);
			int rect = nchain < MAXDIM && k->body->nkids == 1 && n >= 1;
			for (int j = 0; j < nchain && rect; j++)
				rect = !ex_uses(k->lo, chain[j]->var) && !ex_uses(k->hi, chain[j]->var);
			if (!rect)
				break;
			chain[nchain++] = k;
			nk *= n;
			k = k->body->kids[0];
		}
		if (!nchain || k->kind != N_BLOCK || k->lib || k->nts != 1)
			continue;
		const Tasklet *c = &k->ts[0];
		if (!tile_products(g, c))
			continue;
		t = c;
		red = i;
	}
	if (!t)
		return 0;
	Container *acc = sdfg_c(g, t->out.data);
	if (acc->dt != t->dt || !row_local(g, t->out.data, maps, depth))
		return 0;
	/* acc's index may only use reduction variables of extent 1 */
	for (int d = 0; d < acc->rank; d++)
		for (int i = 0; i < nchain; i++)
			if (ex_uses(t->out.idx[d], chain[i]->var) && const_extent(chain[i]) != 1)
				return 0;
	/* nothing else in the row reads acc before the epilogue */
	for (int i = 0; i < red; i++)
		if (count_reads(g, kids[i], t->out.data))
			return 0;
	GpuPlan q = *p;
	q.kind = GK_TILED;
	q.red = red;
	q.nchain = nchain;
	q.nk = nk;
	q.nkids = nkids;
	q.mma = mma_of(P, &t->in[0], &t->in[1]);
	q.nx = q.ny = q.nb = 1;
	for (int i = 0; i < depth; i++) {
		int64_t n = const_extent(maps[i]);
		if (n < 1)
			return 0;
		int ux = opd_uses(g, &t->in[0], maps[i]->var), uy = opd_uses(g, &t->in[1], maps[i]->var);
		q.grp[i] = (signed char)(ux && !uy ? 1 : uy && !ux ? 2 : 0);
		*(q.grp[i] == 1 ? &q.nx : q.grp[i] == 2 ? &q.ny : &q.nb) *= n;
	}
	if (q.nx < GT_MIN || q.ny < GT_MIN || q.nk < GPU_TILE_K)
		return 0;
	choose_tile(P, &q);
	const MmaInfo *mi = &mma_info[q.mma];
	int64_t nt = tiles(&q, q.tile);
	q.block = q.threads;
	q.grid = nt < P->t->gpu_max_blocks ? nt : P->t->gpu_max_blocks;
	q.shared = (int64_t)mi->elem * GPU_TILE_K * 2 * mma_row(q.mma, q.tile) + (mi->tc ? 4 * q.tile * (q.tile + 4) : 0);
	*p = q;
	return 1;
}

/* ---- block reductions -------------------------------------------------------------- */

static int plan_reduce(Sdfg *g, Node *n, GpuPlan *p)
{
	Node *loops[MAXDIM];
	int nloops = 0, acc = -1;
	Wcr op = W_NONE;
	Node *k = n;
	while (k->kind == N_MAP || k->kind == N_FOR) {
		if (nloops == MAXDIM || k->body->nkids != 1)
			return 0;
		for (int i = 0; i < nloops; i++)
			if (ex_uses(k->lo, loops[i]->var) || ex_uses(k->hi, loops[i]->var))
				return 0;
		loops[nloops++] = k;
		k = k->body->kids[0];
	}
	if (k->kind != N_BLOCK || k->lib || !nloops)
		return 0;
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
			for (int l = 0; l < nloops; l++)
				if (ex_uses(t->out.idx[d], loops[l]->var) || ex_uses_kind(g, t->out.idx[d], SYM_VALUE))
					return 0;
		int self = 0;
		for (int j = 0; j < 2; j++)
			self |= t->in[j].kind == OPD_MEM && t->in[j].m.data == t->out.data && !t->in[j].guard;
		op = rmw_op(t->code);
		acc = t->out.data;
		if (!self || op == W_NONE || count_reads(g, n, t->out.data) != 1 || sdfg_numel(g, t->out.data) > 16)
			return 0;
	}
	if (stores != 1)
		return 0;
	p->kind = GK_REDUCE;
	p->depth = nloops;
	p->acc = acc;
	p->op = op;
	p->grid = 1;
	return 1;
}

/* ---- the walk -------------------------------------------------------------------- */

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

/* The plan of a grid: n and the depth - 1 maps nested in it. */
static void plan_grid(Planner *P, GpuPlan *p, Node *n, int depth)
{
	Sdfg *g = P->g;
	Node *maps[MAXDIM] = {n};
	for (int i = 1; i < depth; i++)
		maps[i] = maps[i - 1]->body->kids[0];
	Expr *total = ex_int(g, 1);
	for (int i = 0; i < depth; i++)
		total = ex_mul(g, total, extent(g, maps[i]));
	p->depth = depth;
	p->iters = total;
	int64_t nt = 0;
	int known = ex_isint(total, &nt);
	if (known && P->tiled && plan_tiled(P, p, maps, depth))
		return;
	if (known && P->coop && plan_coop(P, p, maps, depth, nt))
		return;
	p->kind = GK_GRID;
	p->block = P->block;
	if (!known)
		p->grid = -1;
	else if (nt <= 0)
		p->grid = 0;
	else {
		int64_t blocks = (nt + P->block - 1) / P->block;
		p->grid = blocks < P->t->gpu_max_blocks ? blocks : P->t->gpu_max_blocks;
		p->block = nt < P->block ? (int)nt : P->block;
	}
}

/* Plan the kernels of node n, which the host reaches (see ir.h); per_run:
 * the trips of the host loops around it. */
static void plan_node(Planner *P, Node *n, int64_t per_run)
{
	Sdfg *g = P->g;
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			plan_node(P, n->kids[i], per_run);
		return;
	}
	if (n->kind == N_FOR && has_grid(n->body)) { /* a host loop: its kernels launched every trip */
		int64_t e = const_extent(n);
		plan_node(P, n->body, per_run * (e > 0 ? e : 1));
		return;
	}
	GpuPlan *p = arena_alloc(g->arena, sizeof *p);
	p->kernel = P->kernels++;
	p->per_run = per_run;
	p->grid_cap = P->t->gpu_max_blocks;
	p->acc = -1;
	p->red = -1;
	if (n->kind == N_MAP && n->sched == SCHED_GPU_THREAD)
		plan_grid(P, p, n, n->collapse > 0 ? n->collapse : 1);
	else if (n->kind == N_BLOCK || !P->reduce || !plan_reduce(g, n, p)) {
		p->kind = GK_SINGLE;
		p->grid = 1;
		p->block = 1;
	}
	if (p->kind == GK_REDUCE)
		p->block = P->block;
	n->gpu = p;
}

void gpu_plan_walk(Node *n, void (*fn)(Node *k, void *ctx), void *ctx)
{
	if (n->gpu)
		fn(n, ctx);
	else if (n->kind == N_SEQ)
		for (int i = 0; i < n->nkids; i++)
			gpu_plan_walk(n->kids[i], fn, ctx);
	else if (n->kind != N_BLOCK)
		gpu_plan_walk(n->body, fn, ctx);
}

static void clear(Sdfg *g, Node *n, void *ctx)
{
	(void)g, (void)ctx;
	n->gpu = NULL;
}

int pass_gpu_plan(PassCtx *c)
{
	Sdfg *g = c->g;
	sdfg_walk(g, g->root, clear, NULL);
	if (!TARGET_IS_GPU(c->tgt))
		return 0;
	Planner P = {g, c->tgt, pass_bool(c, "tiled"), pass_bool(c, "cooperative"), pass_bool(c, "block_reduce"),
	             pass_bool(c, "tensor_cores"), 0, c->tgt->gpu_block, 0};
	const char *tile = pass_str(c, "tile"), *block = pass_str(c, "block");
	if (strcmp(tile, "auto"))
		P.tile = (int)strtol(tile, NULL, 10);
	if (strcmp(block, "auto"))
		P.block = (int)strtol(block, NULL, 10);
	for (int i = 0; i < g->root->nkids; i++) {
		P.kernels = 0;
		plan_node(&P, g->root->kids[i], 1);
	}
	return 0;
}
