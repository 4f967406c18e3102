/*
 * perturb.c - make one step wrong on purpose, for the tests of the
 * numerics bisector (doccc run --dump-values, doccc compare).
 *
 * Off by default; "perturb.node: NAME" (--pass-opt perturb.node=NAME)
 * switches it on for the top-level step whose label names the torch node
 * NAME among the nodes it covers ("conv2d_1+relu_1" covers relu_1). After
 * the step's own work, a tasklet adds 1 to the first element of its first
 * value (sdfg_step_values: what --values dumps), a bool's aside. So the
 * step's value is wrong, and every value computed from it is likely wrong
 * too; a bisector must name this step, not a later one.
 *
 * It runs last, after the memory plan: the tasklet touches a container
 * already placed and needs no schedule. CPU targets only (a GPU step's
 * kernels are planned before it).
 *
 * A name no step covers, or a step with no such value, is an error: a test
 * that perturbs nothing could not fail.
 */
#include <string.h>

#include "../ir.h"

int pass_perturb(PassCtx *c);

/* Does label ("a+b+c") name node? */
static int covers(const char *label, const char *node)
{
	size_t n = strlen(node);
	for (const char *p = label; p && *p; p = strchr(p, '+') ? strchr(p, '+') + 1 : NULL)
		if (!strncmp(p, node, n) && (p[n] == '+' || !p[n]))
			return 1;
	return 0;
}

/* The step's first value that is not a bool (sdfg_step_values), or -1. */
static int first_value(Sdfg *g, Arena *scratch, int step)
{
	int *last = arena_alloc(scratch, sizeof(int) * (size_t)(g->ncs + 1));
	int *ids = arena_alloc(scratch, sizeof(int) * (size_t)(g->ncs + 1));
	sdfg_last_reads(g, last);
	int n = sdfg_step_values(g, step, last, ids, g->ncs);
	for (int v = 0; v < n; v++)
		if (sdfg_c(g, ids[v])->dt != DT_BOOL)
			return ids[v];
	return -1;
}

/* A block that adds 1 to element 0 of container c. */
static Node *add_one(Sdfg *g, int c, const char *label)
{
	Container *ct = sdfg_c(g, c);
	Memlet m = {.data = c};
	for (int d = 0; d < ct->rank; d++)
		m.idx[d] = ex_int(g, 0);
	Operand in[2] = {{.kind = OPD_MEM, .m = m}, {.kind = OPD_CONST, .c = 1}};
	Node *b = sdfg_block(g, label);
	int t = sdfg_tasklet(g, b, T_ADD, ct->dt, 2, in);
	sdfg_store(b, t, m, W_NONE);
	return b;
}

int pass_perturb(PassCtx *c)
{
	Sdfg *g = c->g;
	const char *node = pass_str(c, "node");
	if (!node || !*node)
		return 0;
	if (TARGET_IS_GPU(c->tgt)) {
		diag_error("perturb.node", "the perturb pass is for the CPU targets, not '%s'", c->tgt->name);
		return -1;
	}
	for (int i = 0; i < g->root->nkids; i++) {
		Node *k = g->root->kids[i];
		if (!k->label || !covers(k->label, node))
			continue;
		int v = first_value(g, c->scratch, i);
		if (v < 0) {
			diag_error("perturb.node", "the step '%s' that covers '%s' leaves no value to perturb", k->label, node);
			return -1;
		}
		Node *seq = k;
		if (k->kind != N_SEQ) { /* the step and the addition, one step still */
			seq = sdfg_seq(g, k->label);
			seq->parent = g->root;
			seq->flops = k->flops;
			seq->tune = k->tune;
			sdfg_append(g, seq, k);
			g->root->kids[i] = seq;
		}
		sdfg_append(g, seq, add_one(g, v, k->label));
		return 0;
	}
	diag_error("perturb.node", "no step covers a torch node called '%s'", node);
	return -1;
}
