/*
 * gpu_api.h - the host API of a device-resident library (cuda, rocm and
 * their simulation), printed into NAME.cu by backends/emit_gpu.c after
 * gpu_model.h, the weights file's loader (--external-weights), the
 * descriptor's tables, the status decoder (DC_STATUS) and, with run-time
 * dims, the dims API (dc_prealloc, dc_unset, NAME_set_dims). Every runtime
 * call is checked and turns into DOCCC_ERR_DEVICE (or _NOMEM) with the
 * runtime's message in NAME_last_error.
 *
 * Launch-free replay: a run is its kernels and, last, an async copy of the
 * device status flag into a pinned host word, which the run's end reads
 * after synchronizing (clearing the device flag only when it was set).
 * From the second run on, that sequence is captured once per set of
 * input/output pointers as a CUDA/HIP graph and replayed with one
 * cudaGraphLaunch (the top comment of emit_gpu.c says more). DOCCC_GPU_GRAPHS=0
 * at create turns it off: eager launches on the legacy stream.
 *
 * The macros it takes (emit_gpu.c defines them; make unit's harness,
 * test/unit/rt_gpu.cpp, compiles it under each combination):
 *   DC_NAME         the model's name, a string literal ("mlp")
 *   DC_API(f)       the model's name for f: DC_API(create) is mlp_create
 *   DC_NIN, DC_NOUT the numbers of inputs and outputs
 *   DC_NDIMS        the run-time dims (0: a static library)
 *   DC_WEIGHTS      0 no weights (none the program reads), 1 embedded
 *                   (DC_API(weights_blob)), 2 a weights file (dc_weights_map)
 *   DC_RUNTIME      the runtime's name ("CUDA", "HIP": doccc_gpu.h)
 *
 * The opening comment is for this file's reader: the library gets what
 * follows it (rt_body).
 */
static thread_local char dc_create_msg[512];

static void dc_default_log(void *user, int level, const char *msg)
{
	(void)user, (void)level;
	fprintf(stderr, "%s\n", msg);
}

static int dc_rt_error(DC_API(t) *m, cudaError_t e, const char *what)
{
	snprintf(m ? m->msg : dc_create_msg, sizeof dc_create_msg,
	         DC_NAME ": %s failed: %s (%s, error %d); " DC_NAME " needs a usable " DC_RUNTIME
	         " GPU (check the driver and the device), or build it for the host with -t openmp",
	         what, cudaGetErrorString(e), cudaGetErrorName(e), (int)e);
	(void)cudaGetLastError();
	return e == cudaErrorMemoryAllocation ? DOCCC_ERR_NOMEM : DOCCC_ERR_DEVICE;
}

#define DC_TRY(m, call, what) do { cudaError_t dc_e = (call); if (dc_e != cudaSuccess) return dc_rt_error((m), dc_e, (what)); } while (0)

/* the run's status: synchronize, read the flag the run copied to the host, clear it */
static int dc_finish(DC_API(t) *m)
{
	DC_TRY(m, cudaStreamSynchronize(m->stream), "the run");
	int f = *m->flag;
	*m->flag = 0;
	if (f) {
		DC_TRY(m, cudaMemsetAsync(m->err, 0, sizeof(int), m->stream), "clearing the run's status");
		DC_TRY(m, cudaStreamSynchronize(m->stream), "clearing the run's status");
	}
	return DC_STATUS(m, f);
}

/* the run on stream s: its kernels, then the copy of its status flag to the host */
static cudaError_t dc_enqueue(DC_API(t) *m, cudaStream_t s, const void *const *ins, void *const *outs)
{
#if DC_NDIMS
	DC_API(forward)(m->w, m->ws DC_STATE_ARG(m), s, m->err, ins, outs, m->dims, m->ofs);
#else
	DC_API(forward)(m->w, m->ws DC_STATE_ARG(m), s, m->err, ins, outs);
#endif
	cudaError_t e = cudaGetLastError();
	return e != cudaSuccess ? e : cudaMemcpyAsync(m->flag, m->err, sizeof(int), cudaMemcpyDeviceToHost, s);
}

/* the graph slot of these pointers (*hit = 1), else an empty or the least recently used one */
static dc_graph *dc_graph_for(DC_API(t) *m, const void *const *ins, void *const *outs, int *hit)
{
	dc_graph *lru = &m->graphs[0];
	for (int k = 0; k < DC_GRAPHS; k++) {
		dc_graph *x = &m->graphs[k];
		int same = x->exec != NULL;
		for (int i = 0; same && i < DC_NIN; i++)
			same = x->key[i] == ins[i];
		for (int i = 0; same && i < DC_NOUT; i++)
			same = x->key[DC_NIN + i] == outs[i];
		if (same) {
			*hit = 1;
			return x;
		}
		if (lru->exec && (!x->exec || x->used < lru->used))
			lru = x;
	}
	*hit = 0;
	return lru;
}

/* Capture the run on the model's stream into slot x: x's executable graph updated in place,
 * or a new one. The capture ends on every path; a failed capture leaves x as it was. */
static int dc_capture(DC_API(t) *m, dc_graph *x, const void *const *ins, void *const *outs)
{
	cudaGraph_t g = NULL;
	DC_TRY(m, cudaStreamBeginCapture(m->own, cudaStreamCaptureModeThreadLocal), DC_GRAPH_WHAT);
	cudaError_t e = dc_enqueue(m, m->own, ins, outs);
	cudaError_t end = cudaStreamEndCapture(m->own, &g);
	if (e == cudaSuccess)
		e = end;
	if (e == cudaSuccess && x->exec && dc_graph_update(x->exec, g) != cudaSuccess) {
		(void)cudaGetLastError(); /* another shape: instantiate anew */
		(void)cudaGraphExecDestroy(x->exec);
		x->exec = NULL;
	}
	if (e == cudaSuccess && !x->exec && (e = cudaGraphInstantiateWithFlags(&x->exec, g, 0)) != cudaSuccess)
		x->exec = NULL;
	if (g)
		(void)cudaGraphDestroy(g);
	if (e != cudaSuccess)
		return dc_rt_error(m, e, DC_GRAPH_WHAT);
	for (int i = 0; i < DC_NIN; i++)
		x->key[i] = ins[i];
	for (int i = 0; i < DC_NOUT; i++)
		x->key[DC_NIN + i] = outs[i];
	return DOCCC_OK;
}

/* Issue the run on m->stream: eagerly without graphs, at the first run (a warm-up) and into a
 * capture of the caller's; else as the graph of these pointers, captured if there is none. */
static int dc_launch(DC_API(t) *m, const void *const *ins, void *const *outs)
{
	(void)cudaGetLastError();
	cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
	if (m->own && m->async)
		DC_TRY(m, cudaStreamIsCapturing(m->stream, &cs), "querying the stream's capture status");
	if (!m->own || !m->runs || cs != cudaStreamCaptureStatusNone) {
		DC_TRY(m, dc_enqueue(m, m->stream, ins, outs), "a kernel launch");
		m->runs++;
		return DOCCC_OK;
	}
	int hit;
	dc_graph *x = dc_graph_for(m, ins, outs, &hit);
	int rc = hit ? DOCCC_OK : dc_capture(m, x, ins, outs);
	if (rc)
		return rc;
	x->used = m->runs;
	DC_TRY(m, cudaGraphLaunch(x->exec, m->stream), "launching the run's " DC_RUNTIME " graph");
	m->runs++;
	return DOCCC_OK;
}

/* a run on the model's stream starts after earlier legacy-stream work, as on that stream */
static int dc_order(DC_API(t) *m)
{
	if (!m->own || m->async)
		return DOCCC_OK;
	cudaError_t e = cudaEventRecord(m->legacy, 0);
	if (e == cudaSuccess)
		e = cudaStreamWaitEvent(m->own, m->legacy, 0);
	return e == cudaSuccess ? DOCCC_OK : dc_rt_error(m, e, "ordering the run after the default stream");
}

static int dc_check_pointers(DC_API(t) *m, const void *const *ins, void *const *outs)
{
	for (int i = 0; i < DC_NIN; i++)
		if (!dc_is_device(ins[i])) {
			snprintf(m->msg, sizeof m->msg, DC_NAME "_run: input %d ('%s') is not GPU memory: " DC_NAME "_run takes device pointers "
			         "(cudaMalloc/hipMalloc, or a GPU tensor's data pointer); copy it to the GPU first, or call " DC_NAME "_run_host, "
			         "which copies on every call", i, dc_ins[i].name);
			return DOCCC_ERR_DEVICE;
		}
	for (int i = 0; i < DC_NOUT; i++)
		if (!dc_is_device(outs[i])) {
			snprintf(m->msg, sizeof m->msg, DC_NAME "_run: output %d ('%s') is not GPU memory: " DC_NAME "_run writes through device "
			         "pointers; allocate it on the GPU, or call " DC_NAME "_run_host", i, dc_outs[i].name);
			return DOCCC_ERR_DEVICE;
		}
	return DOCCC_OK;
}

/* pointers a graph was captured with were checked then: a replay skips the runtime's pointer queries */
static int dc_run(DC_API(t) *m, const void *const *ins, void *const *outs)
{
	int hit = 0;
	if (m->own && m->runs)
		(void)dc_graph_for(m, ins, outs, &hit);
	int rc = hit ? DOCCC_OK : dc_check_pointers(m, ins, outs);
	if (rc == DOCCC_OK)
		rc = dc_order(m);
	if (rc == DOCCC_OK)
		rc = dc_launch(m, ins, outs);
	if (rc == DOCCC_OK && !m->async)
		rc = dc_finish(m);
	return rc;
}

static int dc_run_host(DC_API(t) *m, const void *const *ins, void *const *outs)
{
	if (!m->warned) {
		m->warned = 1;
		m->log(m->log_user, DOCCC_LOG_WARNING, DC_NAME ": performance warning: " DC_NAME "_run_host "
		       "copies the inputs to the GPU and the outputs back on every call; pass device pointers to " DC_NAME "_run to avoid it");
	}
	for (int i = 0; i < DC_NIN; i++)
		if (!m->hin[i])
			DC_TRY(m, cudaMalloc(&m->hin[i], DC_INB(m, i) ? DC_INB(m, i) : 1), "cudaMalloc of an input buffer");
	for (int i = 0; i < DC_NOUT; i++)
		if (!m->hout[i])
			DC_TRY(m, cudaMalloc(&m->hout[i], DC_OUTB(m, i) ? DC_OUTB(m, i) : 1), "cudaMalloc of an output buffer");
	int rc = dc_order(m);
	if (rc)
		return rc;
	for (int i = 0; i < DC_NIN; i++)
		DC_TRY(m, cudaMemcpyAsync(m->hin[i], ins[i], DC_INB(m, i), cudaMemcpyHostToDevice, m->stream), "copying an input to the GPU");
	rc = dc_launch(m, (const void *const *)m->hin, m->hout);
	if (rc)
		return rc;
	for (int i = 0; i < DC_NOUT; i++)
		DC_TRY(m, cudaMemcpyAsync(outs[i], m->hout[i], DC_OUTB(m, i), cudaMemcpyDeviceToHost, m->stream), "copying an output to the host");
	return dc_finish(m);
}

#if DC_NSTATES
/* The state's copies (emit_state_api's): after the runs queued on the
 * instance's stream, synchronous; src NULL fills zeros. */
static int dc_state_copy(DC_API(t) *m, void *dst, const void *src, size_t n, int dir)
{
	static const cudaMemcpyKind kind[] = {cudaMemcpyDeviceToDevice, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
	                                      cudaMemcpyDeviceToDevice};
	cudaError_t e = cudaStreamSynchronize(m->stream);
	if (e == cudaSuccess)
		e = src ? cudaMemcpy(dst, src, n, kind[dir]) : cudaMemset(dst, 0, n);
	return e == cudaSuccess ? DOCCC_OK : dc_rt_error(m, e, "copying the state");
}
static int dc_state_reset(DC_API(t) *m);
#endif

static int dc_setup(DC_API(t) *m, const char *weights_path)
{
	(void)weights_path;
	if (DC_WS_AT_CREATE(m))
		DC_TRY(m, cudaMalloc((void **)&m->ws, DC_WS_AT_CREATE(m)), "cudaMalloc of the workspace");
	DC_TRY(m, cudaMalloc((void **)&m->err, sizeof(int)), "cudaMalloc of the status flag");
	DC_TRY(m, cudaMemset(m->err, 0, sizeof(int)), "cudaMemset of the status flag");
	int *flag = NULL;
	DC_TRY(m, cudaMallocHost((void **)&flag, sizeof(int)), "cudaMallocHost of the status flag");
	m->flag = flag;
	*flag = 0;
	const char *graphs = getenv("DOCCC_GPU_GRAPHS");
	if (!graphs || strcmp(graphs, "0") != 0) {
		cudaStream_t own = NULL;
		cudaEvent_t legacy = NULL;
		DC_TRY(m, cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), "creating the model's stream");
		m->own = m->stream = own;
		DC_TRY(m, cudaEventCreateWithFlags(&legacy, cudaEventDisableTiming), "creating the model's event");
		m->legacy = legacy;
	}
#if DC_WEIGHTS
	DC_TRY(m, cudaMalloc((void **)&m->w, DC_WEIGHTS_SIZE), "cudaMalloc of the weights");
#endif
#if DC_WEIGHTS == 1
	DC_TRY(m, cudaMemcpy(m->w, DC_API(weights_blob), DC_WEIGHTS_SIZE, cudaMemcpyHostToDevice), "uploading the weights");
#elif DC_WEIGHTS == 2
	void *map;
	int rc = dc_weights_map(weights_path, &map, m->msg, sizeof m->msg);
	if (rc)
		return rc;
	cudaError_t e = cudaMemcpy(m->w, (char *)map + 128, DC_WEIGHTS_SIZE, cudaMemcpyHostToDevice);
	munmap(map, 128 + DC_WEIGHTS_SIZE);
	if (e != cudaSuccess)
		return dc_rt_error(m, e, "uploading the weights");
#endif
#if DC_NSTATES
	DC_TRY(m, cudaMalloc((void **)&m->st, DC_STATE_SIZE), "cudaMalloc of the state");
	return dc_state_reset(m);
#else
	return DOCCC_OK;
#endif
}

void DC_API(destroy)(DC_API(t) *model)
{
	if (!model)
		return;
	for (int k = 0; k < DC_GRAPHS; k++)
		if (model->graphs[k].exec)
			(void)cudaGraphExecDestroy(model->graphs[k].exec);
	(void)cudaFree(model->ws);
	(void)cudaFree(model->w);
	(void)cudaFree(model->err);
#if DC_NSTATES
	(void)cudaFree(model->st);
#endif
	for (int i = 0; i < DC_NIN; i++)
		(void)cudaFree(model->hin[i]);
	for (int i = 0; i < DC_NOUT; i++)
		(void)cudaFree(model->hout[i]);
	if (model->flag)
		(void)cudaFreeHost(model->flag);
	if (model->legacy)
		(void)cudaEventDestroy(model->legacy);
	if (model->own)
		(void)cudaStreamDestroy(model->own);
	(void)cudaGetLastError();
	free(model);
}

int DC_API(create_from)(DC_API(t) **model, const char *weights_path)
{
	if (!model)
		return DOCCC_ERR_ARG;
	*model = NULL;
	dc_create_msg[0] = 0;
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess)
		return dc_rt_error(NULL, e, "finding a GPU");
	if (n < 1) {
		snprintf(dc_create_msg, sizeof dc_create_msg, DC_NAME ": no " DC_RUNTIME " GPU found; build for the host with -t openmp");
		return DOCCC_ERR_DEVICE;
	}
	DC_API(t) *m = (DC_API(t) *)calloc(1, sizeof *m);
	if (!m)
		return DOCCC_ERR_NOMEM;
	m->log = dc_default_log;
	int rc = dc_setup(m, weights_path);
	if (rc) {
		memcpy(dc_create_msg, m->msg, sizeof dc_create_msg);
		DC_API(destroy)(m);
		return rc;
	}
	*model = m;
	return DOCCC_OK;
}

int DC_API(create)(DC_API(t) **model)
{
	return DC_API(create_from)(model, NULL);
}

int DC_API(set_stream)(DC_API(t) *model, void *stream)
{
	if (!model)
		return DOCCC_ERR_ARG;
	model->stream = stream ? (cudaStream_t)stream : model->own;
	model->async = stream != NULL;
	return DOCCC_OK;
}

int DC_API(sync)(DC_API(t) *model)
{
	return model ? dc_finish(model) : DOCCC_ERR_ARG;
}

const char *DC_API(last_error)(const DC_API(t) *model)
{
	return model ? model->msg : dc_create_msg;
}

void DC_API(set_log)(DC_API(t) *model, doccc_log_fn fn, void *user)
{
	if (!model)
		return;
	model->log = fn ? fn : dc_default_log;
	model->log_user = user;
}

int DC_API(set_num_threads)(DC_API(t) *model, int n)
{
	if (!model || n < 1)
		return DOCCC_ERR_ARG;
	return n == 1 ? DOCCC_OK : DOCCC_ERR_THREADS;
}

size_t DC_API(workspace_size)(void)
{
	return DC_WORKSPACE_SIZE;
}

static int dc_generic(void *model, const void *const *ins, void *const *outs, int host)
{
	if (!model || (!ins && DC_NIN) || (!outs && DC_NOUT))
		return DOCCC_ERR_ARG;
	for (int i = 0; i < DC_NIN; i++)
		if (!ins[i])
			return DOCCC_ERR_ARG;
	for (int i = 0; i < DC_NOUT; i++)
		if (!outs[i])
			return DOCCC_ERR_ARG;
#if DC_NDIMS
	if (!((DC_API(t) *)model)->dims_set)
		return dc_unset((DC_API(t) *)model);
#endif
	return host ? dc_run_host((DC_API(t) *)model, ins, outs) : dc_run((DC_API(t) *)model, ins, outs);
}

static int dc_run_generic(void *m, const void *const *ins, void *const *outs) { return dc_generic(m, ins, outs, 0); }
static int dc_run_host_generic(void *m, const void *const *ins, void *const *outs) { return dc_generic(m, ins, outs, 1); }
static int dc_create(void **m, const char *p) { return DC_API(create_from)((DC_API(t) **)m, p); }
static void dc_destroy(void *m) { DC_API(destroy)((DC_API(t) *)m); }
static int dc_threads(void *m, int n) { return DC_API(set_num_threads)((DC_API(t) *)m, n); }
static int dc_set_stream(void *m, void *s) { return DC_API(set_stream)((DC_API(t) *)m, s); }
static int dc_sync(void *m) { return DC_API(sync)((DC_API(t) *)m); }
static const char *dc_last_error(const void *m) { return DC_API(last_error)((const DC_API(t) *)m); }
static void dc_set_log(void *m, doccc_log_fn fn, void *user) { DC_API(set_log)((DC_API(t) *)m, fn, user); }
static int dc_dev_alloc(void **p, size_t n)
{
	if (!p)
		return DOCCC_ERR_ARG;
	if (cudaMalloc(p, n ? n : 1) != cudaSuccess) {
		(void)cudaGetLastError();
		return DOCCC_ERR_DEVICE;
	}
	return DOCCC_OK;
}
static int dc_dev_free(void *p)
{
	if (cudaFree(p) != cudaSuccess) {
		(void)cudaGetLastError();
		return DOCCC_ERR_DEVICE;
	}
	return DOCCC_OK;
}
static int dc_dev_copy(void *dst, const void *src, size_t n, int dir)
{
	if (dir != DOCCC_COPY_TO_DEVICE && dir != DOCCC_COPY_TO_HOST)
		return DOCCC_ERR_ARG;
	if (cudaMemcpy(dst, src, n, dir == DOCCC_COPY_TO_DEVICE ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) != cudaSuccess) {
		(void)cudaGetLastError();
		return DOCCC_ERR_DEVICE;
	}
	return DOCCC_OK;
}

