/*
 * schedule.c - choose a schedule for every map, from the target.
 *
 *   vector    an innermost map from 0 (its body is one tasklet block) with a
 *             constant extent of at least the target's fp32 lanes, whose
 *             memlets are all unit-stride or invariant in its variable, with
 *             float32 tasklets the backend can emit as vector code (their
 *             loads may read float16/bfloat16, int8 or uint8, widened lane
 *             by lane: the half-precision or int8 weights of a GEMM tile,
 *             quantized values), int32 ones (int_vec_code: an integer GEMM
 *             tile, cast to float32 only through T_CAST), and a
 *             quantization's store (narrow_q8):
 *             SCHED_VECTOR (the micro-kernels' channel maps, elementwise
 *             rows). The backend runs whole vectors, then the remaining
 *             extent % lanes iterations as one masked vector where the
 *             lanes are all float32 (block_f32), else as scalar code; so
 *             float32 maps of a run-time extent (a register tile's edge,
 *             min(tn, OC - ...)) and costly ones (below) of an extent from 2
 *             to the lanes (a 7-wide row of SiLU) vectorize too. A tasklet that binds
 *             a value symbol stays scalar in the vector body, so it must not
 *             depend on the map variable: the index is then the same in
 *             every lane (embedding rows, index_put rows); a gather along
 *             the innermost dim stays a scalar loop. A map whose block
 *             has an exp-based tasklet (tcode_info vec 2: sigmoid, SiLU,
 *             GELU, tanh) or two operations at least vectorizes also with
 *             constant non-unit strides: the backend gathers and scatters
 *             those operands lane by lane, still far cheaper than a scalar
 *             expf per element or a scalar epilogue (the channel-vectorized
 *             convolution's transposed store, where bias, activation and
 *             residual fuse).
 *   unroll    a map of constant extent <= 16 whose body holds vector maps
 *             of at most UNROLL_VECTORS vectors in all (times the extent):
 *             SCHED_UNROLL, so a register tile is straight-line code. An
 *             elementwise map of a few long rows stays a loop: unrolled,
 *             clang would unroll its rows too, into one block of hundreds
 *             of vector operations (and take minutes over it with
 *             -fwrapv: its store merging is quadratic in the block).
 *   parallel  (openmp) the outermost maps of each top-level child, and
 *             those in the body of a sequential loop there (a recurrent
 *             layer's time steps: every step's matrix product): the
 *             longest run of perfectly nested rectangular maps (at most 3)
 *             is collapsed into one parallel loop, if the nest does enough
 *             work (schedule.min_parallel_work scalar operations). A step
 *             the tuning database scheduled (Node.tune, parallel 0 or 1)
 *             runs on threads or on one core as it says.
 *
 *   gpu       (cuda, rocm) instead of all of the above: the outermost maps
 *             of each top-level child (each child of a top-level sequence)
 *             become one grid: the longest run of perfectly nested
 *             rectangular maps (up to MAXDIM) is SCHED_GPU_THREAD, one GPU
 *             thread per iteration of the collapsed space (the backend
 *             adds a grid-stride loop). A top-level N_FOR whose children
 *             are all maps and that has no locals of its own (a recurrent
 *             layer's time loop) stays on the host: its children are
 *             scheduled the same way and launched every iteration. A map
 *             stops the run if a wcr store below it does not index with
 *             its variable (those iterations would accumulate into one
 *             element). What is left (any other top-level N_FOR, a block,
 *             a map that cannot be collapsed) runs as one GPU thread:
 *             correct, not fast. A kernel whose per-thread
 *             locals exceed the category's gpu_locals cannot run on the GPU:
 *             the pass records it, with the node and why, in
 *             Sdfg.host_steps, and the driver builds the model for the host
 *             (doccc check lists them). How each grid runs (tiles,
 *             cooperative blocks, ...) is the gpu_plan pass's decision.
 *
 * Target none leaves every map sequential; the C compiler then sees plain
 * loops at -O2. No map changes semantics: maps are parallel by definition.
 */
#include <string.h>

#include "../ir.h"

static int memlet_vec_ok(Sdfg *g, const Memlet *m, int var, int *uses, int strided)
{
	/* unit stride in var on the addressed memory (its flat index's
	 * coefficient 0 or 1); a dim of stride 0 (an expanded view) does not
	 * move the address: the operand is invariant in var there, and
	 * broadcast */
	int64_t k;
	if (!sdfg_lane_step(g, m, var, &k))
		return 0;
	if (k != 0)
		*uses = 1;
	return k == 0 || k == 1 || strided;
}

/* The int32 tasklets the CPU printer has in int32 lanes (an integer GEMM
 * tile: its zeroing, the dot products, the zero-point correction; int4
 * weights split from their bytes: a mask, shifts by a constant count
 * within the width, where C's vector shifts are torch's). */
static int int_vec_code(const Tasklet *t)
{
	switch (t->code) {
	case T_ASSIGN: case T_ADD: case T_SUB: case T_MUL: case T_DOT2: case T_DOT4: case T_AND:
		return 1;
	case T_SHL: case T_SHR:
		return t->in[1].kind == OPD_CONST && t->in[1].c >= 0 && t->in[1].c < 32;
	default:
		return 0;
	}
}

/* A quantization's last step: an 8-bit value cast from a float32 clamp
 * to within its type's range (integral after a round), which the printer
 * narrows lane by lane. */
static int narrow_q8(const Node *b, const Tasklet *t)
{
	if (t->code != T_CAST || (t->dt != DT_U8 && t->dt != DT_I8) || t->nin != 1 || t->in[0].kind != OPD_VAL)
		return 0;
	const Tasklet *c = &b->ts[t->in[0].val];
	double lo = t->dt == DT_U8 ? 0 : -128, hi = t->dt == DT_U8 ? 255 : 127;
	return c->code == T_CLAMP && c->dt == DT_F32 && c->p[0] >= lo && c->p[1] <= hi;
}

/* strided: constant non-unit strides are fine (gathered loads, scattered
 * plain stores) */
static int block_vec_ok(Sdfg *g, Node *b, int var, int strided)
{
	if (b->kind != N_BLOCK || b->lib)
		return 0;
	for (int i = 0; i < b->nts; i++) {
		Tasklet *t = &b->ts[i];
		if (t->bind >= 0) {
			/* scalar, uniform across the lanes */
			for (int j = 0; j < t->nin; j++) {
				Operand *o = &t->in[j];
				int uses = 0;
				if (o->kind == OPD_VAL || (o->kind == OPD_EXPR && ex_uses(o->e, var)) ||
				    (o->kind == OPD_MEM && (o->guard || !memlet_vec_ok(g, &o->m, var, &uses, 0) || uses)))
					return 0;
			}
			if (t->store)
				return 0;
			continue;
		}
		int ivec = t->dt == DT_I32, cvt = t->dt == DT_F32 && t->code == T_CAST, q8 = narrow_q8(b, t);
		if (q8) { /* stored, if at all, as whole vectors, or scattered in a costly block */
			int uses = 0;
			if (t->store && (t->wcr != W_NONE || !memlet_vec_ok(g, &t->out, var, &uses, strided) || !uses ||
			                 sdfg_c(g, t->out.data)->dt != t->dt))
				return 0;
			continue;
		}
		if (ivec ? !int_vec_code(t) : t->dt != DT_F32 || (!tcode_info[t->code].vec && !cvt))
			return 0;
		for (int j = 0; j < t->nin; j++) {
			Operand *o = &t->in[j];
			int uses = 0;
			if (o->kind == OPD_EXPR || (o->kind == OPD_VAL && b->ts[o->val].bind >= 0))
				return 0;
			/* lanes of different types mix only through a cast */
			if (o->kind == OPD_VAL && b->ts[o->val].dt != t->dt && !cvt)
				return 0;
			if (o->kind != OPD_MEM)
				continue;
			/* float16/bfloat16 and int8 loads widen to float32 lanes,
			 * int8 ones to int32 lanes too: unit-stride or invariant
			 * only (no gather of such elements) */
			Dtype md = sdfg_c(g, o->m.data)->dt;
			if (ivec || md == DT_I32) {
				int wide = ivec && (md == DT_I8 || md == DT_U8);
				if ((md != DT_I32 && !wide) || (!ivec && !cvt) || !memlet_vec_ok(g, &o->m, var, &uses, 0))
					return 0;
			} else if (md == DT_F32 ? !memlet_vec_ok(g, &o->m, var, &uses, strided)
			                        : (md != DT_BF16 && md != DT_F16 && md != DT_I8 && md != DT_U8) ||
			                              !memlet_vec_ok(g, &o->m, var, &uses, 0))
				return 0;
			if (o->guard && uses)
				return 0;
		}
		if (t->store) {
			int uses = 0;
			if (sdfg_c(g, t->out.data)->dt != t->dt || (ivec && t->wcr != W_NONE && t->wcr != W_SUM) ||
			    !memlet_vec_ok(g, &t->out, var, &uses, strided && t->wcr == W_NONE && !ivec))
				return 0;
			if (!uses)
				return 0; /* every lane would store the same element */
		}
	}
	return 1;
}

/* Are block b's lanes all float32 (no cast; every access that moves with
 * var float32; stores that set or add)? Then the backend ends a map whose
 * extent is not a whole number of vectors in one masked vector
 * (emit_cpu.c: masked_ok), and one shorter than a vector is worth it. */
static int block_f32(Sdfg *g, Node *b, int var)
{
	for (int i = 0; i < b->nts; i++) {
		Tasklet *t = &b->ts[i];
		if (t->bind >= 0)
			continue;
		if (t->dt != DT_F32 || t->code == T_CAST)
			return 0;
		for (int j = 0; j < t->nin; j++) {
			int uses = 0;
			if (t->in[j].kind == OPD_MEM && memlet_vec_ok(g, &t->in[j].m, var, &uses, 1) && uses &&
			    sdfg_c(g, t->in[j].m.data)->dt != DT_F32)
				return 0;
		}
		if (t->store && (sdfg_c(g, t->out.data)->dt != DT_F32 || (t->wcr != W_NONE && t->wcr != W_SUM)))
			return 0;
	}
	return 1;
}

/* Is block b's arithmetic worth gathers and scatters: a tasklet whose SIMD
 * version is far cheaper than its scalar one, or two operations at least
 * (a fused epilogue: bias and activation, a residual add)? A copy or one
 * operation stays a scalar loop. */
static int block_costly(Node *b)
{
	int ops = 0;
	for (int i = 0; b->kind == N_BLOCK && i < b->nts; i++) {
		Tasklet *t = &b->ts[i];
		if (t->bind >= 0)
			continue;
		if (tcode_info[t->code].vec == 2)
			return 1;
		ops += t->code != T_ASSIGN;
	}
	return ops >= 2;
}

static int64_t extent(Node *m)
{
	int64_t lo, hi;
	if (!ex_isint(m->lo, &lo) || !ex_isint(m->hi, &hi))
		return -1;
	return (hi - lo + m->step - 1) / m->step;
}

/* The most vector operations (per statement) an unrolled map may make. */
#define UNROLL_VECTORS 64

static void vectorize(Sdfg *g, Node *n, int lanes)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			vectorize(g, n->kids[i], lanes);
		break;
	case N_FOR:
	case N_MAP:
		vectorize(g, n->body, lanes);
		if (n->kind == N_MAP && n->step == 1 && n->body->nkids == 1) {
			int64_t e = extent(n), lo;
			Node *b = n->body->kids[0];
			/* at least one vector; or float32 lanes, ended by a masked
			 * vector: a run-time extent (a tile's edge, min(tn, ...)), or
			 * a short costly one */
			int f32 = block_f32(g, b, n->var), costly = block_costly(b);
			if ((e >= lanes || (f32 && (e < 0 || (e > 1 && costly)))) && ex_isint(n->lo, &lo) && lo == 0 &&
			    (block_vec_ok(g, b, n->var, 0) || (costly && block_vec_ok(g, b, n->var, 1))))
				n->sched = SCHED_VECTOR;
		}
		/* unroll a small map around short vector maps (a register tile) */
		if (n->kind == N_MAP && n->sched == SCHED_SEQ) {
			int64_t e = extent(n), vecs = 0;
			Node *b = n->body;
			int allvec = b->nkids > 0;
			for (int i = 0; i < b->nkids; i++) {
				allvec &= b->kids[i]->kind == N_MAP && b->kids[i]->sched == SCHED_VECTOR;
				vecs += MAX(extent(b->kids[i]), 0) / lanes; /* a run-time extent: a tile's edge, min(tn, ...) */
			}
			if (e > 0 && e <= 16 && allvec && e * vecs <= UNROLL_VECTORS)
				n->sched = SCHED_UNROLL;
		}
		break;
	case N_BLOCK:
		break;
	}
}

/* Scalar work of a subtree, roughly: product of loop extents times tasklets. */
static int64_t work(Node *n)
{
	int64_t w = 0;
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			w += work(n->kids[i]);
		return w;
	case N_MAP:
	case N_FOR: {
		int64_t e = extent(n);
		return (e < 0 ? 64 : e) * work(n->body);
	}
	case N_BLOCK:
		return n->lib ? 1 : n->nts;
	}
	return 0;
}

/* work() as an expression of the run-time dims, for a nest whose extents
 * depend on them (NULL where work() is exact). */
static Expr *work_x(Sdfg *g, Node *n)
{
	Expr *w = ex_int(g, 0), *k;
	int64_t v;
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			w = ex_add(g, w, (k = work_x(g, n->kids[i])) ? k : ex_int(g, work(n->kids[i])));
		return ex_isint(w, &v) ? NULL : w;
	case N_MAP:
	case N_FOR: {
		Expr *e = ex_div(g, ex_addi(g, ex_sub(g, n->hi, n->lo), n->step - 1), ex_int(g, n->step));
		int64_t lo, hi;
		ex_range(g, e, &lo, &hi);
		if (ex_isint(e, &v) && !(k = work_x(g, n->body)))
			return NULL;
		if (ex_uses_kind(g, e, SYM_LOOP) || ex_uses_kind(g, e, SYM_VALUE))
			return NULL; /* a triangular or data-dependent extent: keep work()'s guess */
		k = work_x(g, n->body);
		return ex_mul(g, e, k ? k : ex_int(g, work(n->body)));
	}
	case N_BLOCK:
		return NULL;
	}
	return NULL;
}

/* Does loop n declare locals of its own? */
static int owns_locals(Sdfg *g, const Node *n)
{
	for (int i = 0; i < g->ncs; i++)
		if (g->cs[i].kind == CK_LOCAL && !g->cs[i].dead && g->cs[i].owner == n->id)
			return 1;
	return 0;
}

/* seqv[0..nseq): the sequential loops around n (their variables), whose
 * maps run on threads only where they use none of them: a kernel gets its
 * own loops' variables, not the step's. */
enum { MAX_OUTER = 8 };
static void parallelize(Sdfg *g, Node *n, int64_t minwork, const int *seqv, int nseq)
{
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			parallelize(g, n->kids[i], minwork, seqv, nseq);
		return;
	}
	if (n->kind == N_FOR && n->sched == SCHED_SEQ && !owns_locals(g, n) && nseq < MAX_OUTER) {
		/* a sequential loop around maps (a recurrent layer's time
		 * steps): its maps run on threads, every iteration (not where
		 * it has locals, which the threads' kernels cannot see) */
		int in[MAX_OUTER];
		for (int i = 0; i < nseq; i++)
			in[i] = seqv[i];
		in[nseq] = n->var;
		parallelize(g, n->body, minwork, in, nseq + 1);
		return;
	}
	if (n->kind != N_MAP || n->sched != SCHED_SEQ)
		return;
	for (int i = 0; i < nseq; i++)
		if (node_uses_sym(g, n, seqv[i]))
			return;
	if (work(n) < minwork)
		return;
	/* collapse perfectly nested rectangular maps */
	int depth = 1;
	Node *m = n;
	int outer[3] = {n->var, -1, -1};
	while (depth < 3 && m->body->nkids == 1 && m->body->kids[0]->kind == N_MAP) {
		Node *k = m->body->kids[0];
		int rect = k->sched == SCHED_SEQ;
		for (int i = 0; i < depth && rect; i++)
			rect = !ex_uses(k->lo, outer[i]) && !ex_uses(k->hi, outer[i]);
		if (!rect)
			break;
		outer[depth++] = k->var;
		m = k;
	}
	n->sched = SCHED_PARALLEL;
	n->collapse = depth;
	/* run-time extents: work() guessed 64 for each; the library decides */
	n->par_work = work_x(g, n);
	n->par_min = minwork;
}

/* Does every wcr store below n (to a non-local container) index with var? */
static int wcr_indexed(Sdfg *g, Node *n, int var)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			if (!wcr_indexed(g, n->kids[i], var))
				return 0;
		return 1;
	case N_MAP:
	case N_FOR:
		return wcr_indexed(g, n->body, var);
	case N_BLOCK:
		for (int i = 0; i < n->nts && !n->lib; i++) {
			Tasklet *t = &n->ts[i];
			if (!t->store || t->wcr == W_NONE || sdfg_c(g, t->out.data)->kind == CK_LOCAL)
				continue;
			int uses = 0;
			Container *c = sdfg_c(g, t->out.data);
			for (int d = 0; d < c->rank; d++)
				uses |= ex_uses(t->out.idx[d], var);
			if (!uses)
				return 0;
		}
		return 1;
	}
	return 1;
}

/* Bytes of the locals declared by loops in subtree n (their owners). */
static int64_t local_bytes(Sdfg *g, Node *n)
{
	int64_t b = 0;
	if (n->kind == N_SEQ)
		for (int i = 0; i < n->nkids; i++)
			b += local_bytes(g, n->kids[i]);
	if (n->kind != N_MAP && n->kind != N_FOR)
		return b;
	for (int i = 0; i < g->ncs; i++) {
		Container *c = &g->cs[i];
		if (c->kind == CK_LOCAL && !c->dead && c->owner == n->id)
			b += sdfg_numel(g, i) * dtype_info[c->dt].size;
	}
	return b + local_bytes(g, n->body);
}

/* A step-level N_FOR that runs on the host, launching the kernels of its
 * body every iteration: one whose children are all maps (each a grid) and
 * that has no locals of its own (host code cannot share a buffer with the
 * kernels). */
static int host_loop(Sdfg *g, Node *n)
{
	if (n->kind != N_FOR || n->body->nkids == 0 || owns_locals(g, n))
		return 0;
	for (int i = 0; i < n->body->nkids; i++)
		if (n->body->kids[i]->kind != N_MAP)
			return 0;
	return 1;
}

/* n: a top-level child or a child of one, or of a host loop (label: the
 * top-level child's). */
static void gpu_map(Sdfg *g, Node *n, const Target *t, const char *label)
{
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			gpu_map(g, n->kids[i], t, label);
		return;
	}
	if (host_loop(g, n)) {
		gpu_map(g, n->body, t, label);
		return;
	}
	int64_t lb = local_bytes(g, n);
	if (lb > t->gpu_locals) {
		HostStep h = {label && *label ? label : "?",
		              arena_printf(g->arena, "its kernel needs %lld bytes of per-thread buffers, more than the %lld a %s "
		                           "thread of category %s may declare",
		                           (long long)lb, (long long)t->gpu_locals, t->name, t->category)};
		VEC_PUSH(g->arena, g->host_steps, g->nhost_steps, g->caphost_steps, h);
		return;
	}
	if (n->kind != N_MAP || !wcr_indexed(g, n->body, n->var))
		return; /* one GPU thread */
	int depth = 1;
	Node *m = n;
	int outer[MAXDIM] = {n->var};
	while (depth < MAXDIM && m->body->nkids == 1 && m->body->kids[0]->kind == N_MAP) {
		Node *k = m->body->kids[0];
		int ok = wcr_indexed(g, k->body, k->var);
		for (int i = 0; i < depth && ok; i++)
			ok = !ex_uses(k->lo, outer[i]) && !ex_uses(k->hi, outer[i]);
		if (!ok)
			break;
		outer[depth++] = k->var;
		m = k;
	}
	for (Node *k = n;; k = k->body->kids[0]) {
		k->sched = SCHED_GPU_THREAD;
		if (k == m)
			break;
	}
	n->collapse = depth;
}

int pass_schedule(PassCtx *c)
{
	Sdfg *g = c->g;
	const Target *t = c->tgt;
	if (TARGET_IS_GPU(t)) {
		g->nhost_steps = 0;
		for (int i = 0; i < g->root->nkids; i++)
			gpu_map(g, g->root->kids[i], t, g->root->kids[i]->label);
		return 0;
	}
	int lanes = t->vec_bits / 32; /* none: 0, plain loops for the C compiler */
	if (lanes > 1 && pass_bool(c, "vectorize"))
		vectorize(g, g->root, lanes);
	if (t->threads && pass_bool(c, "parallel")) {
		int64_t minwork = pass_int(c, "min_parallel_work");
		for (int i = 0; i < g->root->nkids; i++) {
			const Tune *u = g->root->kids[i]->tune; /* the tuning database's choice */
			if (!u || u->parallel < 0)
				parallelize(g, g->root->kids[i], minwork, NULL, 0);
			else if (u->parallel)
				parallelize(g, g->root->kids[i], 0, NULL, 0);
		}
	}
	return 0;
}
