/*
 * test_read.c - unit tests of the SDFG reader (ir/read.c) and of doccc
 * opt's pieces: a graph built here with every field the dump holds (run-time
 * dims, guards, assertion messages, workspace slots, views, locals, value
 * symbols, a parallel map's run-time work, library attributes of every kind,
 * small and large constants) is dumped, read and dumped again, byte for byte,
 * and compared field by field; a pass run on a graph read asks for bytes the
 * dump does not hold and fails with a message; and each class of bad input
 * is a message located at its place in the file ("r.json: containers[3]:
 * error: ..."), never a crash, with nothing returned.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/backend.h"
#include "../../ir/ir.h"
#include "check.h"

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* The source of the large constant: 1, 2, 3, ... */
static int count_make(Sdfg *g, const ConstSrc *s, void *dst)
{
	(void)s;
	for (int i = 0; i < 1024; i++) ((float *)dst)[i] = (float)(i + 1);
	(void)g;
	return 0;
}

/* Every field of the dump, in a graph that verifies:
 *   x[s0], k[4] int64 in; w[8] and big[1024] const; t[s0] transient with a
 *   view tv; y[s0], z[4, 8] out; a lib node (attributes of every kind);
 *   map i: t[i] = x[i] * w[i % 8] (parallel, run-time work);
 *   map i: y[i] = tv[i] + big[i // 2] with assert(k[0]) (msgs[0]);
 *   for r: acc (a local of the loop) = ..., z[r, j] = x[ix] (ix bound by
 *   index(k[r], s0)). */
static Sdfg *rich_graph(Arena *a)
{
	Sdfg *g = sdfg_new(a, "rich");
	memset(g->hash, 'a', 64);
	int s0 = sdfg_add_sym(g, "s0", SYM_SHAPE, 1, 64);
	VEC_PUSH(g->arena, g->dims, g->ndims, g->capdims, s0);
	Expr *S = ex_sym(g, s0);
	int x = sdfg_add_container_x(g, "x", DT_F32, CK_INPUT, 1, &S);
	int k = sdfg_add_container(g, "k", DT_I64, CK_INPUT, 1, (int64_t[]){4});
	int w = sdfg_add_container(g, "w", DT_F32, CK_CONST, 1, (int64_t[]){8});
	float *wd = arena_alloc(g->arena, 8 * sizeof *wd);
	for (int i = 0; i < 8; i++) wd[i] = i == 3 ? -0.0f : (float)i / 3;
	sdfg_c(g, w)->data = wd;
	int big = sdfg_const_new(g, "big", DT_F32, 1, (int64_t[]){1024}, count_make, "", 1);
	int t = sdfg_add_container_x(g, "t", DT_F32, CK_TRANSIENT, 1, &S);
	int tv = sdfg_add_view(g, "tv", t, 1, &S, NULL, ex_int(g, 0));
	int y = sdfg_add_container_x(g, "y", DT_F32, CK_OUTPUT, 1, &S);
	int z = sdfg_add_container(g, "z", DT_F32, CK_OUTPUT, 2, (int64_t[]){4, 8});
	int unused = sdfg_add_container(g, "unused", DT_F16, CK_TRANSIENT, 0, NULL);
	sdfg_c(g, unused)->dead = 1;
	sdfg_c(g, t)->aofs = -2;
	sdfg_c(g, t)->aslot = 0;
	g->ws = arena_alloc(g->arena, sizeof *g->ws);
	g->nws = 1;
	g->ws[0].id = t;
	g->ws[0].size = ex_muli(g, ex_div(g, ex_addi(g, ex_muli(g, S, 4), 63), ex_int(g, 64)), 64);
	g->ws[0].below = arena_alloc(g->arena, sizeof(int));
	g->arena_size = 128;
	Guard gd = {S, ex_int(g, 6), G_NE, "Ne(s0, 6)", NULL};
	VEC_PUSH(g->arena, g->guards, g->nguards, g->capguards, gd);
	const char *msg = "k[0] must be \"true\"";
	VEC_PUSH(g->arena, g->msgs, g->nmsgs, g->capmsgs, msg);
	g->specialized = "s1=4";
	const char *ops[2] = {"aten.mul.Tensor", "aten.index_select.default"};
	g->census_ops = arena_alloc(g->arena, sizeof ops);
	g->census_counts = arena_alloc(g->arena, 2 * sizeof(int));
	memcpy(g->census_ops, ops, sizeof ops);
	g->census_counts[0] = 2, g->census_counts[1] = 1;
	g->ncensus = g->capcensus = 2;

	/* a library node: every attribute kind and the values that are easy to lose */
	Node *lb = sdfg_libblock(g, "reduce_1", LIB_GATHER);
	lb->lib->in[0] = x;
	lb->lib->in[1] = -1;
	lb->lib->nin = 2;
	lb->lib->out[0] = z;
	lb->lib->nout = 1;
	lib_set_int(g, lb->lib, "big", INT64_MAX);
	lib_set_int(g, lb->lib, "neg", INT64_MIN);
	lib_set_ints(g, lb->lib, "dims", (const int64_t[]){1, -1, 9007199254740993}, 3);
	lib_set_ints(g, lb->lib, "none", NULL, 0);
	lib_set_float(g, lb->lib, "one", 1.0);
	lib_set_float(g, lb->lib, "negzero", -0.0);
	lib_set_float(g, lb->lib, "tiny", 5e-324);
	lib_set_float(g, lb->lib, "ninf", -INFINITY);
	lib_set_float(g, lb->lib, "nan", NAN);
	lib_set_bool(g, lb->lib, "keepdim", 1);
	lib_set_str(g, lb->lib, "mode", "Infinity");
	sdfg_append(g, g->root, lb);

	/* map i: t[i] = x[i] * w[i % 8] */
	Node *m1 = sdfg_loop(g, N_MAP, "i", ex_int(g, 0), S, 1);
	m1->sched = SCHED_PARALLEL;
	m1->collapse = 1;
	m1->par_work = ex_muli(g, S, 3);
	m1->par_min = 32768;
	Node *b1 = sdfg_block(g, "mul");
	sdfg_append(g, m1->body, b1);
	Expr *i1 = ex_sym(g, m1->var), *i8 = ex_mod(g, i1, ex_int(g, 8));
	Operand o1[2] = {opd_mem(x, 1, &i1), opd_mem(w, 1, &i8)};
	sdfg_store(b1, sdfg_tasklet(g, b1, T_MUL, DT_F32, 2, o1), opd_mem(t, 1, &i1).m, W_NONE);
	sdfg_append(g, g->root, m1);

	/* map i: y[i] = tv[i] + big[i // 2], assert(k[0]) */
	Node *m2 = sdfg_loop(g, N_MAP, "i", ex_int(g, 0), S, 1);
	Node *b2 = sdfg_block(g, "add");
	sdfg_append(g, m2->body, b2);
	Expr *i2 = ex_sym(g, m2->var), *half = ex_div(g, i2, ex_int(g, 2)), *zero = ex_int(g, 0);
	Operand o2[2] = {opd_mem(tv, 1, &i2), opd_mem(big, 1, &half)};
	sdfg_store(b2, sdfg_tasklet(g, b2, T_ADD, DT_F32, 2, o2), opd_mem(y, 1, &i2).m, W_NONE);
	Operand oa = opd_mem(k, 1, &zero);
	sdfg_tasklet(g, b2, T_ASSERT, DT_BOOL, 1, &oa);
	sdfg_append(g, g->root, m2);
	/* as a GPU grid of run-time size (gpu_plan), and a step the schedule kept on the host */
	m2->sched = SCHED_GPU_THREAD;
	m2->collapse = 1;
	GpuPlan *p2 = arena_alloc(g->arena, sizeof *p2);
	*p2 = (GpuPlan){.kind = GK_GRID, .kernel = 0, .block = 256, .grid = -1, .grid_cap = 2112, .per_run = 1, .depth = 1,
	                .iters = S, .acc = -1, .red = -1};
	m2->gpu = p2;
	HostStep hs = {"conv \"1\"", "its kernel needs 70000 bytes of per-thread buffers"};
	VEC_PUSH(g->arena, g->host_steps, g->nhost_steps, g->caphost_steps, hs);

	/* for r: acc = 0; for j: acc += x[ix] * 0.5, z[r, j] = x[ix] (guarded, pad -inf) */
	Node *f = sdfg_loop(g, N_FOR, "r", ex_int(g, 0), ex_int(g, 4), 1);
	int acc = sdfg_add_container(g, "acc", DT_F32, CK_LOCAL, 0, NULL);
	sdfg_c(g, acc)->owner = f->id;
	Node *ib = sdfg_block(g, "init");
	sdfg_append(g, f->body, ib);
	Operand c0 = opd_const(0);
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_F32, 1, &c0), opd_mem(acc, 0, NULL).m, W_NONE);
	Node *mj = sdfg_loop(g, N_MAP, "j", ex_int(g, 0), ex_int(g, 8), 2);
	mj->sched = SCHED_VECTOR;
	sdfg_append(g, f->body, mj);
	Node *b3 = sdfg_block(g, "gather");
	sdfg_append(g, mj->body, b3);
	Expr *r = ex_sym(g, f->var), *j = ex_sym(g, mj->var);
	Operand io[2] = {opd_mem(k, 1, &r), opd_expr(S)};
	int ti = sdfg_tasklet(g, b3, T_INDEX, DT_I64, 2, io);
	b3->ts[ti].p[0] = 1;
	int ix = sdfg_bind(g, b3, ti, "ix", 0, 63);
	Expr *xi = ex_sym(g, ix), *zi[2] = {r, j};
	Operand og = opd_guarded(x, 1, &xi, -INFINITY);
	int tg = sdfg_tasklet(g, b3, T_ASSIGN, DT_F32, 1, &og);
	sdfg_store(b3, tg, opd_mem(z, 2, zi).m, W_NONE);
	Operand om[2] = {opd_val(tg), opd_const(0.5)};
	int tm = sdfg_tasklet(g, b3, T_MUL, DT_F32, 2, om);
	Operand cl = opd_val(tm);
	int tc = sdfg_tasklet(g, b3, T_CLAMP, DT_F32, 1, &cl);
	b3->ts[tc].p[0] = -1e300;
	b3->ts[tc].p[1] = INFINITY;
	sdfg_store(b3, tc, opd_mem(acc, 0, NULL).m, W_SUM);
	sdfg_append(g, g->root, f);
	return g;
}

static char *dump(Sdfg *g)
{
	Buf b = {0};
	CHECK_INT(sdfg_dump_json(g, &b), 0);
	return b.s;
}

/* Read text as file "r.json": the graph, or NULL with the messages captured. */
static Sdfg *rd(Arena *a, const char *text)
{
	capture();
	diag_reset();
	return sdfg_read_json(a, "r.json", text, strlen(text));
}

static void test_round_trip(void)
{
	Arena *a = arena_new(), *b = arena_new();
	Sdfg *g = rich_graph(a);
	CHECK_INT(sdfg_verify(g, "built"), 0);
	char *d1 = dump(g);
	Sdfg *h = rd(b, d1);
	CHECK(h != NULL);
	CHECK_STR(captured(), "");
	if (!h) {
		fprintf(stderr, "%s", diagbuf.s ? diagbuf.s : "");
		free(d1);
		arena_free(a);
		arena_free(b);
		return;
	}
	char *d2 = dump(h);
	CHECK(d1 && d2 && !strcmp(d1, d2));
	/* field by field, what the bytes may not show */
	CHECK_INT(h->nextid, g->nextid);
	CHECK_INT(h->nsyms, g->nsyms);
	CHECK_INT(h->ncs, g->ncs);
	for (int i = 0; i < g->ncs && i < h->ncs; i++)
		for (int d = 0; d < g->cs[i].rank; d++)
			CHECK(ex_eq(g->cs[i].shape[d], h->cs[i].shape[d]) && ex_eq(g->cs[i].stride[d], h->cs[i].stride[d]));
	const LibNode *l = h->root->kids[0]->lib, *l0 = g->root->kids[0]->lib;
	CHECK(l && l->nattrs == l0->nattrs);
	for (int i = 0; l && i < l->nattrs && i < l0->nattrs; i++) {
		CHECK_STR(l->attrs[i].name, l0->attrs[i].name);
		CHECK_INT(l->attrs[i].kind, l0->attrs[i].kind);
	}
	CHECK(l && l->in[1] == -1 && l->nin == 2 && l->out[1] == -1);
	CHECK(l && lib_attr(l, "one")->kind == A_FLOAT && lib_float(l, "one", 0) == 1.0);
	CHECK(l && signbit(lib_float(l, "negzero", 1)) && isnan(lib_float(l, "nan", 0)));
	CHECK(l && lib_int(l, "big", 0) == INT64_MAX && lib_int(l, "neg", 0) == INT64_MIN);
	CHECK(l && lib_attr(l, "mode")->kind == A_STR);
	const float *w = sdfg_const_get(h, 2);
	CHECK(w && w[2] == 2.0f / 3 && signbit(w[3]));
	if (w) sdfg_const_put(h, 2);
	/* the tree: parents, ids, the local's owner, the slot */
	Node *f = h->root->kids[3];
	CHECK(f->kind == N_FOR && f->body->parent == f && f->body->kids[1]->parent == f->body);
	CHECK_INT(h->cs[9].owner, f->id);
	CHECK(h->root->kids[1]->par_work && ex_eq(h->root->kids[1]->par_work, g->root->kids[1]->par_work));
	CHECK(h->nws == 1 && ex_eq(h->ws[0].size, g->ws[0].size) && h->ws[0].id == 4);
	CHECK(h->nguards == 1 && h->guards[0].op == G_NE && !h->guards[0].msg);
	CHECK_STR(h->msgs[0], g->msgs[0]);
	CHECK_STR(h->specialized, "s1=4");
	/* the large constant's bytes are not in the dump: asking for them is a
	 * message naming it and the file, never a crash */
	capture();
	diag_reset();
	CHECK(sdfg_const_known(h, 3) && sdfg_const_get(h, 3) == NULL);
	CHECK(contains(captured(), "r.json: error: the bytes of constant 'big' are not in the SDFG dump"));
	CHECK(d1 && !contains(d1, "\"data\": \"0000803f00000040"));   /* big's 1, 2 */
	free(d1);
	free(d2);
	arena_free(a);
	arena_free(b);
}

/* A batch norm whose statistics are too large for the dump: fold_constants
 * fails with the message (and the verifier never sees a half-folded graph). */
static void test_pass_without_bytes(void)
{
	Arena *a = arena_new(), *b = arena_new();
	Sdfg *g = sdfg_new(a, "bn");
	int64_t xs[2] = {2, 512}, cs[1] = {512};
	int x = sdfg_add_container(g, "x", DT_F32, CK_INPUT, 2, xs);
	int st[4];
	for (int i = 0; i < 4; i++) st[i] = sdfg_const_new(g, "bnstat", DT_F32, 1, cs, count_make, "", 1);
	int y = sdfg_add_container(g, "y", DT_F32, CK_OUTPUT, 2, xs);
	Node *bn = sdfg_libblock(g, "batch_norm", LIB_BATCHNORM);
	bn->lib->in[0] = x;
	for (int i = 0; i < 4; i++) bn->lib->in[i + 1] = st[i];
	bn->lib->nin = 5;
	bn->lib->out[0] = y;
	bn->lib->nout = 1;
	lib_set_float(g, bn->lib, "eps", 1e-5);
	sdfg_append(g, g->root, bn);
	char *d = dump(g);
	Sdfg *h = rd(b, d);
	CHECK(h != NULL);
	Options o;
	opt_init(&o, b);
	Target t;
	CHECK_INT(target_resolve(&t, &o), 0);
	capture();
	diag_reset();
	CHECK_INT(passes_run_one(h, &o, &t, pass_find("fold_constants")), -1);
	CHECK(contains(captured(), "r.json: error: the bytes of constant 'bnstat' are not in the SDFG dump"));
	CHECK(pass_find("dce_late") && !pass_find("nope"));
	free(d);
	arena_free(a);
	arena_free(b);
}

/* A copy of text with the first occurrence of from replaced by to. */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from);
	if (!p) {
		fprintf(stderr, "test_read: '%s' is not in the dump\n", from);
		return NULL;
	}
	Buf b = {0};
	buf_putn(&b, text, (size_t)(p - text));
	buf_puts(&b, to);
	buf_puts(&b, p + strlen(from));
	return b.s;
}

static void test_bad_input(void)
{
	Arena *a = arena_new();
	char *good = dump(rich_graph(a));
	/* each edit of the good dump, and the message it must give (file and place first) */
	static const struct { const char *from, *to, *msg; } bad[] = {
		{"\"sdfg_format\": 1", "\"sdfg_format\": 2", "r.json: error: sdfg_format: this doccc reads version 1"},
		{"\"sdfg_format\": 1,", "", "r.json: error: not an SDFG dump of doccc"},
		{"\"hash\"", "\"hashh\"", "r.json: error: unknown key 'hashh'"},
		{"\"hash\": \"aaaa", "\"hash\": \"xaaa", "r.json: hash: error: expected a sha256"},
		{"\"name\": \"rich\"", "\"name\": \"9rich\"", "r.json: name: error: the model's name is not a C identifier"},
		{"{\"id\": 1, \"name\": \"k\"", "{\"id\": 7, \"name\": \"k\"", "r.json: containers[1].id: error: expected an integer from 1 to 1"},
		{"\"name\": \"k\"", "\"name\": \"for\"", "r.json: containers[1]: error: name 'for' is a C or C++ keyword"},
		{"\"name\": \"k\"", "\"name\": \"x\"", "'x' names container 0 and container 1"},
		{"\"name\": \"k\"", "\"name\": \"s0\"", "'s0' names container 1 and symbol 0"},
		{"\"dtype\": \"int64\", \"kind\": \"input\"", "\"dtype\": \"int4\", \"kind\": \"input\"",
		 "r.json: containers[1].dtype: error: expected one of float32, float64"},
		{"\"kind\": \"input\", \"shape\": [\"4\"]", "\"kind\": \"nput\", \"shape\": [\"4\"]", "r.json: containers[1].kind: error: expected one of input"},
		{"\"shape\": [\"4\"], \"strides\": [\"1\"]", "\"shape\": [\"4\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"], \"strides\": [\"1\"]",
		 "r.json: containers[1].shape: error: expected an array of at most 8 elements"},
		{"\"shape\": [\"4\"], \"strides\": [\"1\"]", "\"shape\": [\"4\"], \"strides\": [\"1\", \"1\"]",
		 "r.json: containers[1].strides: error: expected an array of 1 expressions"},
		{"\"shape\": [\"4\"]", "\"shape\": [\"u + 4\"]", "r.json: containers[1].shape[0]: error: unknown symbol 'u' in 'u + 4'"},
		{"\"shape\": [\"4\"]", "\"shape\": [\"4 +\"]", "r.json: containers[1].shape[0]: error: expected an expression at offset 3"},
		{"\"shape\": [\"4\"]", "\"shape\": [\"-4\"]", "r.json: containers[1]: error: dim 0 of 'k' is negative"},
		{"\"shape\": [\"4\"]", "\"shape\": [\"4611686018427387904\"]", "r.json: containers[1]: error: 'k' is too large"},
		{"\"shape\": [\"4\"]", "\"shape\": [4]", "r.json: containers[1].shape[0]: error: expected an expression (a string)"},
		{"\"base\": 4", "\"base\": 99", "r.json: containers[5]: error: the base of view 'tv' is no live container"},
		{"\"base\": 4", "\"base\": 5", "r.json: containers[5]: error: the base of view 'tv' is no live container that is not a view"},
		{"\"base\": 4", "\"base\": -1", "r.json: containers[5]: error: base -1 for a container of kind view"},
		{"\"io\": 1, \"aofs\"", "\"io\": 0, \"aofs\"", "r.json: inputs[1]: error: container 1 ('k') is not the input of io 1"},
		{"\"inputs\": [0, 1]", "\"inputs\": [0]", "r.json: inputs: error: input 'k' (io 1) is missing"},
		{"\"inputs\": [0, 1]", "\"inputs\": [0, 17]", "r.json: inputs[1]: error: expected a container id from 0 to 9"},
		{"\"owner\": 8", "\"owner\": 7", "r.json: containers[9]: error: the owner of local 'acc', node 7, is no loop"},
		{"\"aofs\": -2, \"aslot\": 0", "\"aofs\": -2", "r.json: containers[4]: error: 'aslot' goes with aofs -2"},
		{"\"aofs\": -2, \"aslot\": 0", "\"aofs\": 64", "r.json: ws[0].data: error: 't' is not placed in slot 0"},
		{"\"aofs\": -2, \"aslot\": 0", "\"aofs\": -2, \"aslot\": 3", "r.json: ws: error: 't' is placed in slot 3 of 1"},
		{"\"base\": -1, \"io\": 0, \"aofs\": -1", "\"base\": -1, \"io\": 0, \"aofs\": 0",
		 "r.json: containers[0]: error: aofs 0 for a container of kind input"},
		{"\"data\": \"00000000abaaaa3e", "\"data\": \"00000000abaaaa3", "r.json: containers[2].data: error: expected 64 hex digits"},
		{"\"data\": \"00000000abaaaa3e", "\"data\": \"00000000ABAAAA3E", "r.json: containers[2].data: error: expected lower-case hex digits"},
		{", \"data\": \"00000000abaaaa3e", ", \"datum\": \"00000000abaaaa3e", "r.json: containers[2]: error: unknown key 'datum'"},
		{"\"dims\": [\"s0\"]", "\"dims\": [\"s0\", \"s0\"]", "r.json: dims[1]: error: 's0' is a run-time dim twice"},
		{"\"dims\": [\"s0\"]", "\"dims\": [\"ix\"]", "r.json: dims[0]: error: 'ix' is a value symbol, not a shape one"},
		{"\"op\": \"ne\"", "\"op\": \"gt\"", "r.json: guards[0].op: error: expected one of eq, ne, lt, le"},
		{"{\"a\": \"s0\"", "{\"a\": \"i\"", "r.json: guards[0]: error: a guard uses a loop or value symbol"},
		{"\"below\": []", "\"below\": [0]", "r.json: ws[0].below: error: expected an array of at most 0 elements"},
		{"\"msgs\": [", "\"msgs\": [1, ", "r.json: msgs[0]: error: expected a string or null"},
		{"\"aten.mul.Tensor\": 2", "\"aten.mul.Tensor\": -2", "r.json: census.aten.mul.Tensor: error: expected a count"},
		{"\"next_id\": ", "\"next_id\": 3, \"x\": ", "r.json: error: unknown key 'x'"},
		{"\"root\": {\"type\": \"sequence\", \"id\": 0", "\"root\": {\"type\": \"block\", \"id\": 0",
		 "r.json: root: error: unknown key 'children'"},
		{"\"type\": \"map\", \"id\": 2", "\"type\": \"map\", \"id\": 2000", "r.json: root.children[1].id: error: expected an integer from 0 to"},
		{"\"type\": \"map\", \"id\": 2", "\"type\": \"map\", \"id\": 1", "r.json: error: node id 1 is used by more than one node"},
		{"\"op\": \"gather\"", "\"op\": \"gaher\"", "r.json: root.children[0].library.op: error: expected one of elemwise, conv"},
		{"\"inputs\": [\"x\", null]", "\"inputs\": [\"x\", null, null, null, null, null, null, null, null]",
		 "r.json: root.children[0].library.inputs: error: expected an array of at most 8 elements"},
		{"\"inputs\": [\"x\", null]", "\"inputs\": [\"x\", \"q\"]", "r.json: root.children[0].library.inputs[1]: error: no container is called 'q'"},
		{"\"keepdim\": true", "\"keepdim\": {\"float\": 1.5}", "r.json: root.children[0].library.attrs.keepdim: error: expected an integer, a real"},
		{"\"keepdim\": true", "\"keepdim\": [1, 2.5]", "r.json: root.children[0].library.attrs.keepdim[1]: error: expected an integer"},
		{"\"keepdim\": true", "\"big\": 1", "r.json: root.children[0].library.attrs.big: error: attribute given twice"},
		{"\"var\": \"i\"", "\"var\": \"s0\"", "r.json: root.children[1].var: error: 's0' is a shape symbol, not a loop one"},
		{"\"step\": 1", "\"step\": 0", "r.json: root.children[1].step: error: expected an integer from 1 to"},
		{"\"schedule\": \"parallel\"", "\"schedule\": \"paralel\"", "r.json: root.children[1].schedule: error: expected one of sequential"},
		{"\"collapse\": 1", "\"collapse\": 2", "r.json: root.children[1]: error: collapse 2, but fewer maps are perfectly nested here"},
		{"\"par_work\": \"3*s0\"", "\"par_work\": \"3*i\"", "r.json: root.children[1]: error: 'par_work' uses a loop or value symbol"},
		{"\"body\":", "\"bodi\":", "r.json: root.children[1]: error: missing 'body'"},
		{"\"code\": \"mul\"", "\"code\": \"mull\"", "r.json: root.children[1].body.children[0].tasklets[0].code: error: expected one of assign"},
		{"\"code\": \"mul\"", "\"code\": \"neg\"", "r.json: root.children[1].body.children[0].tasklets[0].inputs: error: neg takes 1 operands, not 2"},
		{"{\"memlet\": {\"data\": \"x\", \"subset\": [\"i\"]}}", "{\"memlet\": {\"data\": \"x\", \"subset\": [\"i\", \"0\"]}}",
		 "r.json: root.children[1].body.children[0].tasklets[0].inputs[0].memlet.subset: error: expected an array of 1 expressions"},
		{"{\"memlet\": {\"data\": \"x\", \"subset\": [\"i\"]}}", "{\"memlet\": {\"data\": \"xx\", \"subset\": [\"i\"]}}",
		 "r.json: root.children[1].body.children[0].tasklets[0].inputs[0].memlet.data: error: no container is called 'xx'"},
		{"{\"memlet\": {\"data\": \"x\", \"subset\": [\"i\"]}}", "{\"memo\": 1}",
		 "r.json: root.children[1].body.children[0].tasklets[0].inputs[0]: error: expected an operand"},
		{"{\"value\": 2}", "{\"value\": 4}", "tasklets[3].inputs[0].value: error: expected the index of an earlier tasklet of the block (0 to 2)"},
		{"\"wcr\": \"sum\"", "\"wcr\": \"add\"", "output.wcr: error: expected one of none, sum, max, min, prod"},
		{"\"params\": [-1.0000000000000001e+300", "\"params\": [\"-Inf\"", "tasklets[3].params[0]: error: expected a number"},
		{"\"code\": \"assert\", \"dtype\": \"bool\", \"inputs\": [{\"memlet\": {\"data\": \"k\", \"subset\": [\"0\"]}}], \"output\": null, \"params\": [0",
		 "\"code\": \"assert\", \"dtype\": \"bool\", \"inputs\": [{\"memlet\": {\"data\": \"k\", \"subset\": [\"0\"]}}], \"output\": null, \"params\": [1",
		 "tasklets[1].params: error: an assertion's first parameter indexes msgs (0 to 0)"},
		{"\"bind\": \"ix\"", "\"bind\": \"r\"", "tasklets[0].bind: error: 'r' is a loop symbol, not a value one"},
		/* GPU plans and host steps */
		{"\"form\": \"grid\"", "\"form\": \"gird\"", "gpu.form: error: expected one of grid, tiled, cooperative, reduce, single"},
		{"\"depth\": 1, \"iterations\"", "\"depth\": 2, \"iterations\"",
		 "root.children[2].gpu: error: the plan's depth 2 names no grid of as many collapsed maps here"},
		{"\"block\": 256", "\"block\": 4096", "gpu.block: error: expected an integer from 1 to 1024"},
		{"\"form\": \"grid\"", "\"form\": \"tiled\"", "gpu: error: missing 'mma'"},
		{"\"form\": \"grid\"", "\"form\": \"single\"", "gpu: error: a grid (SCHED_GPU_THREAD) planned as one thread"},
		{"\"why\": ", "\"whi\": ", "host_steps[0]: error: unknown key 'whi'"},
		/* what the verifier finds, after the reader's checks */
		{"{\"data\": \"z\", \"subset\": [\"r\", \"j\"], \"wcr\": \"none\"}", "{\"data\": \"x\", \"subset\": [\"r\"], \"wcr\": \"none\"}",
		 "r.json: error: node 13 ('gather'): input 'x' is written"},
	};
	for (size_t i = 0; i < COUNTOF(bad); i++) {
		char *t = edit(good, bad[i].from, bad[i].to);
		CHECK(t != NULL);
		if (!t) continue;
		Arena *b = arena_new();
		Sdfg *g = rd(b, t);
		const char *msgs = captured();
		if (g || !contains(msgs, bad[i].msg)) {
			fprintf(stderr, "test_read: edit %zu ('%s'): %s; wanted '%s' in:\n%s", i, bad[i].to, g ? "read" : "not read",
			        bad[i].msg, msgs);
			CHECK(0);
		} else
			CHECK(diag_errors() > 0);
		arena_free(b);
		free(t);
	}
	/* not JSON, not an object, deep nesting */
	Arena *b = arena_new();
	CHECK(rd(b, "{\"sdfg_format\": 1,") == NULL && contains(captured(), "r.json:1:19: error: malformed JSON"));
	CHECK(rd(b, "[1, 2]") == NULL && contains(captured(), "r.json: error: not an SDFG dump"));
	Buf deep = {0};
	const char *pre = strstr(good, "\"root\": ");
	buf_putn(&deep, good, (size_t)(pre - good));
	buf_puts(&deep, "\"root\": ");
	for (int i = 0; i < 300; i++) buf_printf(&deep, "{\"type\": \"sequence\", \"id\": %d, \"label\": \"\", \"children\": [", i);
	for (int i = 0; i < 300; i++) buf_puts(&deep, "]}");
	buf_puts(&deep, "\n}\n");
	CHECK(rd(b, deep.s) == NULL && contains(captured(), "error: nodes nested more than 200 deep"));
	buf_free(&deep);
	arena_free(b);
	free(good);
	arena_free(a);
}

int main(void)
{
	test_round_trip();
	test_pass_without_bytes();
	test_bad_input();
	buf_free(&diagbuf);
	return check_done("test_read");
}
