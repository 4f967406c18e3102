/*
 * rt_gpu.cpp - the GPU runtime sources (backends/rt/gpu_model.h, gpu_api.h,
 * with scalar.h, tf32.h and weights.h) compiled on their own, in the order
 * and with the definitions a device-resident library gives them
 * (backends/emit_gpu.c), around a model of its own: y = 2 x + w[i % 4] on
 * 8 floats, one kernel. make unit builds it under -Wall -Wextra -Werror for
 * every configuration a library uses: static or with a run-time dim
 * (DC_NDIMS 0, 1) times no weights, embedded ones or a weights file
 * (DC_WEIGHTS 0, 1, 2), in the simulation (clang++ -DDOCCC_SIM), where it
 * also runs, and with nvcc and hipcc (compiled only: no GPU here).
 *
 * The run: create (the weights uploaded), run_host twice (eager, then a
 * captured graph replayed), run with device pointers from the descriptor's
 * allocator, host pointers refused with DOCCC_ERR_DEVICE and a message,
 * a caller's stream and sync, destroy; with the run-time dim, a run before
 * the dims are set is refused (DOCCC_ERR_SHAPE) and set_dims grows the
 * workspace. Every output is compared with the expected values.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../backends/rt/gpu_rt.h"
#include "../../backends/doccc_model.h"
#include "check.h"

#ifndef DC_NDIMS
#define DC_NDIMS 0
#endif
#ifndef DC_WEIGHTS
#define DC_WEIGHTS 1
#endif
#define DC_STR_(x) #x
#define DC_STR(x) DC_STR_(x)

typedef struct rtgpu rtgpu_t;
#define DC_MODEL rtgpu
#define DC_API(f) rtgpu_##f
#define DC_NAME "rtgpu"
#define DC_INLINE static __device__ inline
#include "../../backends/rt/scalar.h"
#include "../../backends/rt/tf32.h"

enum { N = 8 };

/* the model: y[i] = 2 x[i] + w[i % 4] (w = 0, 1, 2, 3; none without weights) */
__global__ void rtgpu_k0(const float *x, const float *w, float *y, int64_t n)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] = dc_tf32(2.0f * x[i]) + (w ? w[i % 4] : 0.0f) + (float)dc_floordivi(0, 1);
}

static void rtgpu_forward(const unsigned char *dc_W, unsigned char *dc_ws, cudaStream_t dc_stream, int *dc_err,
                          const void *const *dc_in, void *const *dc_out
#if DC_NDIMS
                          , const int64_t *dc_dims, const int64_t *dc_ofs
#endif
)
{
	(void)dc_ws, (void)dc_err;
#if DC_NDIMS
	(void)dc_ofs;
	const int64_t n = dc_dims[0];
#else
	const int64_t n = N;
#endif
	DC_LAUNCH(rtgpu_k0, dim3(1), dim3(64), dc_stream, (const float *)dc_in[0], DC_WEIGHTS ? (const float *)dc_W : NULL,
	          (float *)dc_out[0], n);
}

#define DC_NIN 1
#define DC_NOUT 1
#define DC_NWS 0
#include "../../backends/rt/gpu_model.h"

#if DC_WEIGHTS == 1
extern "C" const unsigned char rtgpu_weights_blob[] __attribute__((visibility("hidden"))) = {
	0, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40};
#endif
#if DC_WEIGHTS
#define DC_WEIGHTS_SIZE ((size_t)16u)
#else
#define DC_WEIGHTS_SIZE ((size_t)0u)
#endif
#define DC_WORKSPACE_SIZE ((size_t)0u)
static const char dc_weights_sha[] = "4c9c4f354e74153db012329d71c8562ec23e498148174b2c49de58f45d47cdbe";
#if DC_WEIGHTS == 2
#include "../../backends/rt/weights.h"
#endif

static const int64_t dc_in0_shape[] = {DC_NDIMS ? -1 : N}, dc_out0_shape[] = {DC_NDIMS ? -1 : N};
static const doccc_tensor_desc dc_ins[] = {{"x", DOCCC_F32, 1, dc_in0_shape, N, N * 4}};
static const doccc_tensor_desc dc_outs[] = {{"y", DOCCC_F32, 1, dc_out0_shape, N, N * 4}};
#define DC_STATUS(m, st) (st)

#if DC_NDIMS
/* what emit_dims.c prints for one run-time dim n in [1, 64] */
static size_t dc_prealloc(void)
{
	return DC_WORKSPACE_SIZE;
}

static int dc_unset(rtgpu_t *m)
{
	snprintf(m->msg, sizeof m->msg, "rtgpu: call rtgpu_set_dims first");
	return DOCCC_ERR_SHAPE;
}

static int rtgpu_set_dims(rtgpu_t *m, const int64_t *dims)
{
	if (!m || !dims || dims[0] < 1 || dims[0] > 64)
		return DOCCC_ERR_SHAPE;
	int rc = (size_t)dims[0] * 4 > m->wscap ? dc_grow(m, (size_t)dims[0] * 4) : DOCCC_OK;
	if (rc)
		return rc;
	if (!m->dims_set || m->dims[0] != dims[0])
		dc_moved(m);
	m->dims[0] = dims[0];
	m->inb[0] = m->outb[0] = (size_t)dims[0] * 4;
	m->dims_set = 1;
	return DOCCC_OK;
}
#endif

#include "../../backends/rt/gpu_api.h"

static int same(const float *y, const float *x)
{
	for (int i = 0; i < N; i++)
		if (y[i] != 2 * x[i] + (DC_WEIGHTS ? (float)(i % 4) : 0.0f))
			return 0;
	return 1;
}

static const char *weights_file(void)
{
#if DC_WEIGHTS == 2
	static char path[] = "/tmp/rt_gpu_weights_XXXXXX";
	unsigned char hdr[128] = "DOCCCW01";
	uint64_t size = 16;
	memcpy(hdr + 8, &size, 8);
	memcpy(hdr + 16, dc_weights_sha, 64);
	static const unsigned char data[16] = {0, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40};
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, hdr, 128) != 128 || write(fd, data, 16) != 16)
		return NULL;
	close(fd);
	return path;
#else
	return NULL;
#endif
}

static int warnings;

static void count_warnings(void *user, int level, const char *msg)
{
	(void)user, (void)msg;
	warnings += level == DOCCC_LOG_WARNING;
}

int main(void)
{
	CHECK_INT(strlen(dc_weights_sha), 64);
	float x[N], y[N];
	for (int i = 0; i < N; i++)
		x[i] = (float)i - 2.5f;
	const void *in[1] = {x};
	void *out[1] = {y};
	const char *wf = weights_file();
	void *m = NULL;
	CHECK_INT(dc_create(&m, wf), DOCCC_OK);
	if (!m) {
		fprintf(stderr, "create: %s\n", dc_last_error(NULL));
		return check_done("rt_gpu");
	}
	dc_set_log(m, count_warnings, NULL);
#if DC_NDIMS
	CHECK_INT(dc_run_host_generic(m, in, out), DOCCC_ERR_SHAPE);
	CHECK_STR(dc_last_error(m), "rtgpu: call rtgpu_set_dims first");
	const int64_t dims[1] = {N};
	CHECK_INT(rtgpu_set_dims((rtgpu_t *)m, dims), DOCCC_OK);
#endif
	for (int k = 0; k < 3; k++) { /* eager, then captured, then replayed */
		memset(y, 0, sizeof y);
		CHECK_INT(dc_run_host_generic(m, in, out), DOCCC_OK);
		CHECK(same(y, x));
	}
	CHECK_INT(warnings, 1); /* run_host's copies, once per instance */
	/* device pointers, from the descriptor's allocator */
	void *dx = NULL, *dy = NULL;
	CHECK_INT(dc_dev_alloc(&dx, sizeof x), DOCCC_OK);
	CHECK_INT(dc_dev_alloc(&dy, sizeof y), DOCCC_OK);
	CHECK_INT(dc_dev_copy(dx, x, sizeof x, DOCCC_COPY_TO_DEVICE), DOCCC_OK);
	const void *din[1] = {dx};
	void *dout[1] = {dy};
	for (int k = 0; k < 2; k++) {
		CHECK_INT(dc_run_generic(m, din, dout), DOCCC_OK);
		memset(y, 0, sizeof y);
		CHECK_INT(dc_dev_copy(y, dy, sizeof y, DOCCC_COPY_TO_HOST), DOCCC_OK);
		CHECK(same(y, x));
	}
	/* host pointers to the device entry point */
	CHECK_INT(dc_run_generic(m, in, out), DOCCC_ERR_DEVICE);
	CHECK(strstr(dc_last_error(m), "rtgpu_run: input 0 ('x') is not GPU memory") != NULL);
	/* a caller's stream: the run returns at once, sync gives its status */
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
	CHECK_INT(dc_set_stream(m, s), DOCCC_OK);
	CHECK_INT(dc_run_generic(m, din, dout), DOCCC_OK);
	CHECK_INT(dc_sync(m), DOCCC_OK);
	CHECK_INT(dc_set_stream(m, NULL), DOCCC_OK);
	(void)cudaStreamDestroy(s);
	CHECK_INT(dc_threads(m, 1), DOCCC_OK);
	CHECK_INT(dc_threads(m, 2), DOCCC_ERR_THREADS);
	CHECK_INT(dc_dev_free(dx), DOCCC_OK);
	CHECK_INT(dc_dev_free(dy), DOCCC_OK);
	CHECK_INT(dc_dev_copy(y, dy, 4, 7), DOCCC_ERR_ARG);
	CHECK_INT(rtgpu_workspace_size(), 0);
	dc_destroy(m);
	CHECK_INT(dc_create(NULL, wf), DOCCC_ERR_ARG);
	if (wf)
		unlink(wf);
	return check_done("rt_gpu (DC_NDIMS " DC_STR(DC_NDIMS) ", DC_WEIGHTS " DC_STR(DC_WEIGHTS) ")");
}
