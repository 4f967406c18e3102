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
 *   - anything else at step level (an N_FOR, a block, a map that was not
 *     collapsed) becomes a kernel of one thread: correct, not fast;
 *   - inside kernels, loops are plain for loops (#pragma unroll for
 *     SCHED_UNROLL) and blocks the walker's tasklets.
 *
 * Kernels take restrict pointers into device memory (workspace, weights,
 * inputs, outputs, all device-resident) and nothing else, so steps of
 * repeated layers share their text exactly as on the CPU. The index and
 * division checks set a device error flag (the first status wins, by
 * atomicCAS) and end the thread; forward goes on, since every access is
 * checked, and the run reads the flag when it synchronizes.
 *
 * The host API (create, run, run_host, set_stream, sync, last_error,
 * set_log, ...) is C++ with C linkage through NAME.h; every runtime call is
 * checked and turns into DOCCC_ERR_DEVICE with the runtime's message.
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

static void gpu_step_end(Em *e, Buf *body, int check)
{
	(void)e, (void)body, (void)check;
}

static Expr *extent(Sdfg *g, Node *m)
{
	return ex_div(g, ex_addi(g, ex_sub(g, m->hi, m->lo), m->step - 1), ex_int(g, m->step));
}

static char *expr_str(Sdfg *g, Expr *x)
{
	Buf b = {0};
	ex_print(&b, g, x);
	char *s = arena_strdup(g->arena, b.s ? b.s : "0");
	buf_free(&b);
	return s;
}

/* A kernel for subtree n: over the collapsed space of its first depth
 * maps, or one thread for depth 0; its launch printed at e's position. */
static void gpu_kernel(Em *e, Node *n, int depth)
{
	Sdfg *g = e->g;
	Node *maps[MAXDIM] = {n};
	for (int i = 1; i < depth; i++)
		maps[i] = maps[i - 1]->body->kids[0];
	unsigned char *set = arena_alloc(g->arena, (size_t)g->ncs + 1);
	emit_touched(g, n, set);
	int id = e->nkern++;
	Buf params = {0}, args = {0};
	for (int c = 0; c < g->ncs; c++) {
		Container *ct = &g->cs[c];
		if (!set[c] || ct->kind == CK_LOCAL)
			continue;
		int ro = ct->kind == CK_INPUT || ct->kind == CK_CONST;
		buf_printf(&params, "%s%s%s *restrict v_%s", params.len ? ", " : "", ro ? "const " : "", emit_storage_type[ct->dt],
		           ct->name);
		buf_printf(&args, ", v_%s", ct->name);
	}
	if (emit_has_check(n)) {
		buf_printf(&params, "%sint *dc_err", params.len ? ", " : "");
		buf_puts(&args, ", dc_err");
	}
	Expr *ext[MAXDIM], *total = ex_int(g, 1);
	for (int i = 0; i < depth; i++) {
		ext[i] = extent(g, maps[i]);
		total = ex_mul(g, total, ext[i]);
	}
	Buf *saved = e->b;
	int sind = e->ind;
	e->b = e->kern;
	e->ind = 0;
	e->inkern = 1;
	emit_line(e, "__global__ void %s_k%d(%s)", e->nm, id, params.len ? params.s : "");
	emit_line(e, "{");
	e->ind++;
	if (depth) {
		emit_line(e, "const int64_t dc_n = %s;", expr_str(g, total));
		emit_line(e, "for (int64_t dc_t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; dc_t < dc_n; "
		             "dc_t += (int64_t)gridDim.x * blockDim.x) {");
		e->ind++;
		for (int i = 0; i < depth; i++) {
			Expr *inner = ex_int(g, 1);
			for (int j = i + 1; j < depth; j++)
				inner = ex_mul(g, inner, ext[j]);
			int64_t one;
			Buf ix = {0};
			buf_puts(&ix, "dc_t");
			if (!(ex_isint(inner, &one) && one == 1))
				buf_printf(&ix, " / (%s)", expr_str(g, inner));
			if (i > 0)
				buf_printf(&ix, " %% (%s)", expr_str(g, ext[i]));
			emit_line(e, "const int64_t %s = %s + (%s) * %lld;", g->syms[maps[i]->var].name, expr_str(g, maps[i]->lo), ix.s,
			          (long long)maps[i]->step);
			buf_free(&ix);
		}
		for (int i = 0; i < depth; i++)
			emit_locals(e, maps[i]);
		emit_node(e, maps[depth - 1]->body);
		e->ind--;
		emit_line(e, "}");
	} else
		emit_node(e, n);
	e->ind--;
	emit_line(e, "}\n");
	e->b = saved;
	e->ind = sind;
	e->inkern = 0;
	const char *a = args.len ? args.s : "";
	int64_t nt;
	if (!depth)
		emit_line(e, "DC_LAUNCH(%s_k%d, dim3(1), dim3(1), dc_stream%s);", e->nm, id, a);
	else if (ex_isint(total, &nt)) {
		int64_t bs = e->t->gpu_block, nb = (nt + bs - 1) / bs;
		if (nb > e->t->gpu_max_blocks)
			nb = e->t->gpu_max_blocks;
		if (nt <= 0)
			emit_line(e, "/* %s_k%d: empty grid */", e->nm, id);
		else
			emit_line(e, "DC_LAUNCH(%s_k%d, dim3(%lld), dim3(%lld), dc_stream%s);", e->nm, id, (long long)nb,
			          (long long)(nt < bs ? nt : bs), a);
	} else {
		const char *tn = expr_str(g, total);
		emit_line(e, "if ((%s) > 0)", tn);
		emit_line(e, "\tDC_LAUNCH(%s_k%d, dim3((unsigned)((%s) + %d - 1) / %d < %d ? (unsigned)(((%s) + %d - 1) / %d) : %d), "
		             "dim3(%d), dc_stream%s);", e->nm, id, tn, e->t->gpu_block, e->t->gpu_block, e->t->gpu_max_blocks, tn,
		          e->t->gpu_block, e->t->gpu_block, e->t->gpu_max_blocks, e->t->gpu_block, a);
	}
	buf_free(&params);
	buf_free(&args);
}

static void gpu_plain_loop(Em *e, Node *n)
{
	Sdfg *g = e->g;
	const char *v = g->syms[n->var].name;
	if (n->sched == SCHED_UNROLL)
		emit_line(e, "#pragma unroll");
	emit_line(e, "for (int64_t %s = %s; %s < %s; %s += %lld) {", v, expr_str(g, n->lo), v, expr_str(g, n->hi), v,
	          (long long)n->step);
	e->ind++;
	emit_locals(e, n);
	emit_node(e, n->body);
	e->ind--;
	emit_line(e, "}");
}

static void gpu_loop(Em *e, Node *n)
{
	if (e->inkern)
		gpu_plain_loop(e, n);
	else
		gpu_kernel(e, n, n->kind == N_MAP && n->sched == SCHED_GPU_THREAD ? (n->collapse > 0 ? n->collapse : 1) : 0);
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
	emit_line(e, "\tconst void *const *dc_in, void *const *dc_out)");
	emit_line(e, "{");
	e->ind++;
	emit_line(e, "(void)dc_W; (void)dc_ws; (void)dc_in; (void)dc_out;");
	unsigned char *set = arena_alloc(g->arena, (size_t)g->ncs + 1);
	for (int i = 0; i < g->root->nkids; i++) {
		Node *k = g->root->kids[i];
		memset(set, 0, (size_t)g->ncs + 1);
		emit_touched(g, k, set);
		emit_line(e, "{ /* %s */", k->label && *k->label ? k->label : "?");
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
	"\t(void)cudaGetLastError();\n\treturn DOCCC_ERR_DEVICE;\n}\n\n"
	"#define DC_TRY(m, call, what) do { cudaError_t dc_e = (call); if (dc_e != cudaSuccess) return dc_rt_error((m), dc_e, (what)); } while (0)\n\n"
	"/* the run's status: synchronize, read the device error flag, clear it */\n"
	"static int dc_finish(@N@_t *m)\n{\n\tint f = 0;\n"
	"\tDC_TRY(m, cudaMemcpyAsync(&f, m->err, sizeof f, cudaMemcpyDeviceToHost, m->stream), \"reading the run's status\");\n"
	"\tDC_TRY(m, cudaStreamSynchronize(m->stream), \"the run\");\n"
	"\tif (f) {\n\t\tDC_TRY(m, cudaMemsetAsync(m->err, 0, sizeof(int), m->stream), \"clearing the run's status\");\n"
	"\t\tDC_TRY(m, cudaStreamSynchronize(m->stream), \"clearing the run's status\");\n\t}\n\treturn f;\n}\n\n"
	"static int dc_launch(@N@_t *m, const void *const *ins, void *const *outs)\n{\n"
	"\t(void)cudaGetLastError();\n\t@N@_forward(m->w, m->ws, m->stream, m->err, ins, outs);\n"
	"\tDC_TRY(m, cudaGetLastError(), \"a kernel launch\");\n\tm->runs++;\n\treturn DOCCC_OK;\n}\n\n"
	"static int dc_check_pointers(@N@_t *m, const void *const *ins, void *const *outs)\n{\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n\t\tif (!dc_is_device(ins[i])) {\n"
	"\t\t\tsnprintf(m->msg, sizeof m->msg, \"@N@_run: input %d ('%s') is not GPU memory: @N@_run takes device pointers \"\n"
	"\t\t\t         \"(cudaMalloc/hipMalloc, or a GPU tensor's data pointer); copy it to the GPU first, or call @N@_run_host, \"\n"
	"\t\t\t         \"which copies on every call\", i, dc_ins[i].name);\n\t\t\treturn DOCCC_ERR_DEVICE;\n\t\t}\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n\t\tif (!dc_is_device(outs[i])) {\n"
	"\t\t\tsnprintf(m->msg, sizeof m->msg, \"@N@_run: output %d ('%s') is not GPU memory: @N@_run writes through device \"\n"
	"\t\t\t         \"pointers; allocate it on the GPU, or call @N@_run_host\", i, dc_outs[i].name);\n"
	"\t\t\treturn DOCCC_ERR_DEVICE;\n\t\t}\n\treturn DOCCC_OK;\n}\n\n"
	"static int dc_run(@N@_t *m, const void *const *ins, void *const *outs)\n{\n"
	"\tint rc = dc_check_pointers(m, ins, outs);\n\tif (rc == DOCCC_OK)\n\t\trc = dc_launch(m, ins, outs);\n"
	"\tif (rc == DOCCC_OK && !m->async)\n\t\trc = dc_finish(m);\n\treturn rc;\n}\n\n"
	"static int dc_run_host(@N@_t *m, const void *const *ins, void *const *outs)\n{\n"
	"\tif (!m->warned) {\n\t\tm->warned = 1;\n\t\tm->log(m->log_user, DOCCC_LOG_WARNING, \"@N@: performance warning: @N@_run_host \"\n"
	"\t\t       \"copies the inputs to the GPU and the outputs back on every call; pass device pointers to @N@_run to avoid it\");\n\t}\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n\t\tif (!m->hin[i])\n"
	"\t\t\tDC_TRY(m, cudaMalloc(&m->hin[i], dc_ins[i].nbytes ? dc_ins[i].nbytes : 1), \"cudaMalloc of an input buffer\");\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n\t\tif (!m->hout[i])\n"
	"\t\t\tDC_TRY(m, cudaMalloc(&m->hout[i], dc_outs[i].nbytes ? dc_outs[i].nbytes : 1), \"cudaMalloc of an output buffer\");\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n"
	"\t\tDC_TRY(m, cudaMemcpyAsync(m->hin[i], ins[i], dc_ins[i].nbytes, cudaMemcpyHostToDevice, m->stream), \"copying an input to the GPU\");\n"
	"\tint rc = dc_launch(m, (const void *const *)m->hin, m->hout);\n\tif (rc)\n\t\treturn rc;\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n"
	"\t\tDC_TRY(m, cudaMemcpyAsync(outs[i], m->hout[i], dc_outs[i].nbytes, cudaMemcpyDeviceToHost, m->stream), \"copying an output to the host\");\n"
	"\treturn dc_finish(m);\n}\n\n";

static const char api_create[] =
	"static int dc_setup(@N@_t *m, const char *weights_path)\n{\n\t(void)weights_path;\n"
	"\tif (DC_WORKSPACE_SIZE)\n\t\tDC_TRY(m, cudaMalloc((void **)&m->ws, DC_WORKSPACE_SIZE), \"cudaMalloc of the workspace\");\n"
	"\tDC_TRY(m, cudaMalloc((void **)&m->err, sizeof(int)), \"cudaMalloc of the status flag\");\n"
	"\tDC_TRY(m, cudaMemset(m->err, 0, sizeof(int)), \"cudaMemset of the status flag\");\n"
	"\tif (!DC_WEIGHTS_SIZE)\n\t\treturn DOCCC_OK;\n"
	"\tDC_TRY(m, cudaMalloc((void **)&m->w, DC_WEIGHTS_SIZE), \"cudaMalloc of the weights\");\n";

static const char api_weights_embedded[] =
	"\tDC_TRY(m, cudaMemcpy(m->w, @N@_weights_blob, DC_WEIGHTS_SIZE, cudaMemcpyHostToDevice), \"uploading the weights\");\n"
	"\treturn DOCCC_OK;\n}\n\n";

static const char api_weights_file[] =
	"\tif (!weights_path)\n\t\treturn DOCCC_ERR_WEIGHTS;\n"
	"\tint fd = open(weights_path, O_RDONLY | O_CLOEXEC);\n\tstruct stat st;\n"
	"\tif (fd < 0 || fstat(fd, &st) || (size_t)st.st_size != 128 + DC_WEIGHTS_SIZE) {\n"
	"\t\tif (fd >= 0)\n\t\t\tclose(fd);\n\t\treturn DOCCC_ERR_WEIGHTS;\n\t}\n"
	"\tvoid *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);\n\tclose(fd);\n"
	"\tif (map == MAP_FAILED)\n\t\treturn DOCCC_ERR_WEIGHTS;\n"
	"\tif (memcmp(map, \"DOCCCW01\", 8) || memcmp((char *)map + 16, dc_weights_sha, 64)) {\n"
	"\t\tmunmap(map, (size_t)st.st_size);\n\t\treturn DOCCC_ERR_WEIGHTS;\n\t}\n"
	"\tcudaError_t e = cudaMemcpy(m->w, (char *)map + 128, DC_WEIGHTS_SIZE, cudaMemcpyHostToDevice);\n"
	"\tmunmap(map, (size_t)st.st_size);\n\tif (e != cudaSuccess)\n\t\treturn dc_rt_error(m, e, \"uploading the weights\");\n"
	"\treturn DOCCC_OK;\n}\n\n";

static const char api_rest[] =
	"void @N@_destroy(@N@_t *model)\n{\n\tif (!model)\n\t\treturn;\n"
	"\t(void)cudaFree(model->ws);\n\t(void)cudaFree(model->w);\n\t(void)cudaFree(model->err);\n"
	"\tfor (int i = 0; i < @NIN@; i++)\n\t\t(void)cudaFree(model->hin[i]);\n"
	"\tfor (int i = 0; i < @NOUT@; i++)\n\t\t(void)cudaFree(model->hout[i]);\n"
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
	"\tmodel->stream = (cudaStream_t)stream;\n\tmodel->async = stream != NULL;\n\treturn DOCCC_OK;\n}\n\n"
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
	"\tfor (int i = 0; i < @NOUT@; i++)\n\t\tif (!outs[i])\n\t\t\treturn DOCCC_ERR_ARG;\n"
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

static void put_api(Buf *b, const char *text, const char *nm, int nin, int nout)
{
	Buf t1 = {0}, t2 = {0}, t3 = {0};
	emit_replace_all(&t1, text, "@N@", nm);
	char n[16];
	snprintf(n, sizeof n, "%d", nin);
	emit_replace_all(&t2, t1.s, "@NIN@", n);
	snprintf(n, sizeof n, "%d", nout);
	emit_replace_all(&t3, t2.s, "@NOUT@", n);
	buf_puts(b, t3.s);
	buf_free(&t1);
	buf_free(&t2);
	buf_free(&t3);
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
	           nm, DOCCC_VERSION, t->name, t->category, t->march, t->simulate ? ", simulated on the host" : "",
	           t->approx ? ", approximate math" : "", a->cmdline ? a->cmdline : "", g->hash);
	buf_puts(b, "#include \"doccc_gpu.h\"\n#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n");
	buf_printf(b, "#include \"%s.h\"\n\n", nm);
	/* the CPU's helpers as device functions; copysign(0, x) would be C++'s
	 * host-only template overload */
	Buf hl = {0};
	emit_replace_all(&hl, emit_scalar_helpers, "static inline ", "static __device__ inline ");
	emit_replace_all(b, hl.s, "copysign(0, ", "copysign(0.0, ");
	buf_free(&hl);
	buf_puts(b, "\n");
	Buf kern = {0}, fwd = {0};
	e.kern = &kern;
	e.b = &fwd;
	gpu_forward(&e);
	e.b = b;
	if (kern.len)
		buf_puts(b, kern.s);
	buf_puts(b, fwd.s);
	buf_free(&kern);
	buf_free(&fwd);

	/* host code only from here: HIP's device pass must not see the
	 * descriptor's references to host functions */
	buf_puts(b, "#if !defined(__HIP_DEVICE_COMPILE__)\n");
	buf_printf(b, "struct %s {\n\tunsigned char *ws;\n\tunsigned char *w;\n\tint *err;\n\tcudaStream_t stream;\n\tint async;\n"
	              "\tvoid *hin[%d];\n\tvoid *hout[%d];\n\tint warned;\n\tdoccc_log_fn log;\n\tvoid *log_user;\n\tlong runs;\n"
	              "\tchar msg[512];\n};\n\n", nm, g->ninputs + 1, g->noutputs + 1);
	if (w->size && !a->outweights)
		buf_printf(b, "extern \"C\" const unsigned char %s_weights_blob[] __attribute__((visibility(\"hidden\")));\n", nm);
	buf_printf(b, "#define DC_WEIGHTS_SIZE ((size_t)%zuu)\n#define DC_WORKSPACE_SIZE ((size_t)%lldu)\n", w->size, (long long)g->arena_size);
	buf_printf(b, "static const char dc_weights_sha[] = \"%s\";\n\n", w->sha);
	emit_desc_tables(&e);
	buf_puts(b, "\n");
	put_api(b, api_common, nm, g->ninputs, g->noutputs);
	put_api(b, api_create, nm, g->ninputs, g->noutputs);
	put_api(b, a->outweights ? api_weights_file : w->size ? api_weights_embedded : "\treturn DOCCC_OK;\n}\n\n", nm, g->ninputs,
	        g->noutputs);
	put_api(b, api_rest, nm, g->ninputs, g->noutputs);
	typed_run(&e, 0);
	typed_run(&e, 1);
	emit_strerror(&e);
	buf_printf(b, "const doccc_model_desc %s_desc = {\n\tDOCCC_ABI_VERSION, \"%s\", \"%s\", \"%s\", \"%s\", \"%s\",\n", nm, nm,
	           t->name, t->category, DOCCC_VERSION, g->hash);
	buf_printf(b, "\t%d, %d, dc_ins, dc_outs, DC_WORKSPACE_SIZE, %d,\n", g->ninputs, g->noutputs, a->outweights ? 0 : 1);
	buf_printf(b, "\tdc_create, dc_run_generic, dc_destroy, %s_strerror, dc_threads,\n", nm);
	buf_printf(b, "\t1, \"%s\", %d, dc_run_host_generic, dc_set_stream, dc_sync, dc_last_error, dc_set_log,\n",
	           t->kind == TG_CUDA ? "cuda" : "rocm", t->simulate);
	buf_puts(b, "\tdc_dev_alloc, dc_dev_free, dc_dev_copy,\n};\n");
	buf_printf(b, "extern \"C\" const doccc_model_desc doccc_model __attribute__((weak, alias(\"%s_desc\")));\n", nm);
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
	.step_end = gpu_step_end,
};
