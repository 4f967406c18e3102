/*
 * expand.c - the expansion pass: library nodes become maps and tasklets.
 *
 * Each library-node block at the top level of the root sequence is replaced,
 * in place, by one top-level subtree (a sequence of loop nests) that writes
 * the node's outputs, so the invariant of ir.h holds afterwards: every
 * container is written by exactly one top-level child, each element stored
 * once (reductions accumulate into locals and store the final value), but
 * for a scatter's stores at data-dependent indices (ir/expand/index.c).
 *
 * This file holds only the driver: the pass options become an XpTile (a
 * step the tuning database scheduled gets its own, ir/passes/tuning.c) and
 * each node goes to its expansion through the LIB_OPS table. The
 * expansions live in ir/expand/, one file per op family (ops.h lists
 * them), on the building helpers of ir/expand/common.c. Every expansion
 * addresses operands through memlets on the containers as they are, views
 * included, so strided and broadcast inputs need no copies.
 */
#include <stdint.h>
#include <string.h>

#include "../ir.h"
#include "../expand/expand.h"

typedef int (*ExpandFn)(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t);

static const ExpandFn expanders[NLIBOPS] = {
#define X(e, n, f, d) expand_##f,
	LIB_OPS(X)
#undef X
};

/* The integer kernels' operands: int8 on the GPUs (tensor cores), int16
 * pairs or four bytes on the CPUs, by the option and the ISA. */
static IntForm int_form(PassCtx *c)
{
	const char *f = pass_str(c, "int8_dot");
	if (TARGET_IS_GPU(c->tgt))
		return INT_S8;
	if (!strcmp(f, "auto"))
		return c->tgt->dot4 ? INT_QUADS : INT_PAIRS;
	return !strcmp(f, "quads") ? INT_QUADS : INT_PAIRS;
}

/* The tile of a step, with the tuning database's choices (tuning.c) over
 * the rules'. */
static const XpTile *tuned(const XpTile *rules, const Tune *u, XpTile *t)
{
	if (!u)
		return rules;
	*t = *rules;
	if (u->tm > 0)
		t->tm = u->tm, t->tn = u->tn, t->tuned = 1;
	if (u->winograd >= 0)
		t->winograd = u->winograd, t->wino_max_mb = INT64_MAX / 2;
	if (u->pixels >= 0) {
		t->pw_max_c = u->pixels ? INT64_MAX : 0;
		t->pw_min_px = u->pixels ? 0 : INT64_MAX;
	}
	return t;
}

int pass_expand(PassCtx *c)
{
	Sdfg *g = c->g;
	XpTile tile = {
		.tm = (int)pass_int(c, "tile_m"),
		.tn = (int)pass_int(c, "tile_n"),
		.pack = pass_bool(c, "pack_weights"),
		.pw_max_c = pass_int(c, "pointwise_max_channels"),
		.pw_min_px = pass_int(c, "pointwise_min_pixels"),
		.rows = pass_bool(c, "rows_form"),
		.winograd = pass_bool(c, "winograd"),
		.wino_max_mb = pass_int(c, "winograd_max_mb"),
		.vec_lanes = c->tgt->vec_bits / 32,
		.vec_regs = c->tgt->vec_regs,
		/* 256 KiB of stack per row on the CPU; half a GPU thread's locals */
		.row_bytes = TARGET_IS_GPU(c->tgt) ? c->tgt->gpu_locals / 2 : 1 << 18,
		.bound_keys = pass_bool(c, "attention_bound") && !TARGET_IS_GPU(c->tgt),
		.int8_weights = pass_bool(c, "int8_weights"),
		.int4_weights = pass_bool(c, "int4_weights"),
		.int_form = int_form(c),
		.bf16_operands = !TARGET_IS_GPU(c->tgt) && c->tgt->precision == CP_MEDIUM,
		.sum_block = TARGET_IS_GPU(c->tgt) ? 0 : pass_int(c, "sum_block"),
		.gpu_sms = TARGET_IS_GPU(c->tgt) ? c->tgt->gpu_sms : 0,
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
		XpTile own;
		int rc = expanders[l->op](g, l, seq, n->label, tuned(&tile, n->tune, &own));
		if (rc)
			return -1;
		seq->parent = root;
		seq->tune = n->tune;
		seq->flops = lib_flops(g, l);
		root->kids[i] = seq;
	}
	return 0;
}
