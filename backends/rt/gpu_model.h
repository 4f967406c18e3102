/*
 * gpu_model.h - the instance of a device-resident library: its struct, the
 * executable graphs it keeps by pointers, and with run-time dims how
 * set_dims grows the device workspace (dc_grow) and forgets what was made
 * for other dims (dc_moved: graphs and run_host's buffers). Printed into
 * NAME.cu by backends/emit_gpu.c before gpu_api.h, which says which macros
 * both take (DC_MODEL is the struct's tag, the model's name; DC_NSTATES,
 * DC_STATE_SIZE and DC_STATE_ARG come with state only).
 *
 * The opening comment is for this file's reader: the library gets what
 * follows it (rt_body).
 */
#ifndef DC_NSTATES /* a stateless model; else DC_STATE_ARG passes the state to the forward */
#define DC_NSTATES 0
#define DC_STATE_ARG(m)
#endif
#define DC_GRAPHS 4
#define DC_GRAPH_WHAT "capturing the run as a " DC_RUNTIME " graph (DOCCC_GPU_GRAPHS=0 runs without)"
typedef struct {
	cudaGraphExec_t exec;
	const void *key[DC_NIN + DC_NOUT + 1];
	long used;
} dc_graph;

struct DC_MODEL {
	unsigned char *ws;
	unsigned char *w;
	int *err;
	int *flag;
	cudaStream_t stream;
	cudaStream_t own;
	cudaEvent_t legacy;
	int async;
	void *hin[DC_NIN + 1];
	void *hout[DC_NOUT + 1];
	int warned;
	doccc_log_fn log;
	void *log_user;
	long runs;
	dc_graph graphs[DC_GRAPHS];
	char msg[512];
#if DC_NSTATES
	unsigned char *st;         /* the state, on the device (backends/emit.c: emit_state_api) */
#endif
#if DC_NDIMS
	int64_t dims[DC_NDIMS];
	int64_t ofs[DC_NWS + 1];
	size_t wscap;
	int dims_set;
	size_t inb[DC_NIN + 1], outb[DC_NOUT + 1];
#endif
};

#if DC_WEIGHTS == 1
extern "C" const unsigned char DC_API(weights_blob)[] __attribute__((visibility("hidden")));
#endif

/* the inputs' and outputs' bytes (at the dims), the workspace create allocates */
#if DC_NDIMS
#define DC_INB(m, i) ((m)->inb[i])
#define DC_OUTB(m, i) ((m)->outb[i])
#define DC_WS_AT_CREATE(m) ((m)->wscap = dc_prealloc())

/* set_dims: a larger device workspace; graphs and run_host's buffers were
 * made for other dims (sizes and kernel arguments) */
static int dc_grow(DC_API(t) *m, size_t n)
{
	unsigned char *ws = NULL;
	if (cudaMalloc((void **)&ws, n) != cudaSuccess) {
		(void)cudaGetLastError();
		return DOCCC_ERR_NOMEM;
	}
	(void)cudaFree(m->ws);
	m->ws = ws;
	m->wscap = n;
	return DOCCC_OK;
}

static void dc_moved(DC_API(t) *m)
{
	for (int k = 0; k < DC_GRAPHS; k++)
		if (m->graphs[k].exec) {
			(void)cudaGraphExecDestroy(m->graphs[k].exec);
			m->graphs[k].exec = NULL;
		}
	for (int i = 0; i < DC_NIN; i++) {
		(void)cudaFree(m->hin[i]);
		m->hin[i] = NULL;
	}
	for (int i = 0; i < DC_NOUT; i++) {
		(void)cudaFree(m->hout[i]);
		m->hout[i] = NULL;
	}
}
#else
#define DC_INB(m, i) (dc_ins[i].nbytes)
#define DC_OUTB(m, i) (dc_outs[i].nbytes)
#define DC_WS_AT_CREATE(m) DC_WORKSPACE_SIZE
#endif
