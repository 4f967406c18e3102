/*
 * gpusim_test.cpp - the CPU simulation of CUDA in backends/rt/gpu_sim.h:
 * launches (plain and with __syncthreads fibers), atomics, launch
 * validation, simulated device memory (copies, attributes, protection
 * faults on host access, kind checks, limits) and the error-injection
 * environment variables.
 */
#define DOCCC_SIM 1
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include "../../backends/rt/gpu_sim.h"
#include "check.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- kernels ---- */

__global__ void k_index(int *count, unsigned *where, unsigned width)
{
	unsigned tx = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned ty = blockIdx.y * blockDim.y + threadIdx.y;
	unsigned tz = threadIdx.z;
	unsigned id = (tz * gridDim.y * blockDim.y + ty) * width + tx;
	atomicAdd(&count[id], 1);
	where[id] = (blockIdx.x << 24) | (blockIdx.y << 16) | (threadIdx.x << 8) | (threadIdx.y << 4) | threadIdx.z;
}

__global__ __launch_bounds__(256) void k_reduce(const float *__restrict__ in, float *__restrict__ out)
{
	__shared__ float s[256];
	unsigned t = threadIdx.x;
	s[t] = in[blockIdx.x * 256 + t];
	__syncthreads();
	for (unsigned half = 128; half > 0; half >>= 1) {
		if (t < half) s[t] += s[t + half];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = s[0];
}

/* Several barriers, a rotation through shared memory; threads >= live
 * return early and take no part in the barriers after that. */
__global__ void k_rotate(int *out, unsigned live)
{
	__shared__ int s[128];
	unsigned t = threadIdx.x, n = blockDim.x;
	s[t] = (int)t;
	__syncthreads();
	int v = s[(t + 1) % n];
	__syncthreads();
	s[t] = v * 2;
	__syncthreads();
	if (t >= live) {
		out[t] = -1;
		return;
	}
	v = s[(t + n - 1) % n];
	__syncthreads();
	__syncthreads();
	out[t] = v;
}

__global__ void k_atomics(float *fsum, int *isum, int *imax, unsigned long long *usum, long long *lmin)
{
	int id = (int)(blockIdx.x * blockDim.x + threadIdx.x);
	atomicAdd(fsum, 0.5f);
	atomicAdd(isum, id);
	atomicMax(imax, (id * 37) % 1001);
	atomicAdd(usum, 3ull);
	atomicMin(lmin, -(long long)id);
}

__global__ void k_nothing(void) {}

static int empty_calls;
__global__ void k_noargs(void)
{
	empty_calls++;
}

__global__ void k_sync_in_plain(void)
{
	__syncthreads();
}

__global__ void k_fill(float *p, float v, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] = v + (float)i;
}

static __device__ inline float sq(float x)
{
	return x * x;
}

__global__ void k_math(float *out)
{
	out[0] = __expf(0.0f) + __logf(1.0f) + __cosf(0.0f) + __sinf(0.0f);
	out[1] = __powf(2.0f, 3.0f) + __fdividef(1.0f, 4.0f) + __frcp_rn(2.0f);
	out[2] = rsqrtf(4.0f) + (float)rsqrt(16.0) + __fsqrt_rn(9.0f) + sq(2.0f);
	out[3] = __saturatef(1.5f) + __saturatef(-2.0f) + __saturatef(NAN) + __saturatef(0.25f);
}

/* y = y * a + 1: the order of recorded launches shows in the result */
__global__ void k_axpy(float *y, float a, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = y[i] * a + 1.0f;
}

/* ---- helpers ---- */

/* Run fn in a child; return its wait status. */
static int in_child(void (*fn)(void))
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit rl = {0, 0};
		setrlimit(RLIMIT_CORE, &rl);
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) dup2(fd, 2);
		fn();
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return st;
}

static volatile float *child_ptr;
static void child_read(void)
{
	float v = child_ptr[0];
	(void)v;
}
static void child_write(void)
{
	child_ptr[1] = 1.0f;
}
static void child_sync_plain(void)
{
	DC_LAUNCH(k_sync_in_plain, 1, 2, 0);
}

static void *thread_main(void *arg)
{
	float *d = NULL;
	float h[512];
	int bad = 0;
	if (cudaMalloc(&d, sizeof h)) return (void *)1;
	for (int r = 0; r < 50; r++) {
		DC_LAUNCH(k_fill, 2, 256, 0, d, (float)r, 512u);
		if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost)) bad++;
		for (int i = 0; i < 512; i++)
			if (h[i] != (float)(r + i)) bad++;
	}
	cudaFree(d);
	(void)arg;
	return (void *)(intptr_t)bad;
}

/* cudaMalloc and cudaFree from another thread: its status */
static void *thread_malloc(void *arg)
{
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, 64);
	if (e == cudaSuccess) e = cudaFree(p);
	(void)arg;
	return (void *)(intptr_t)e;
}

static cudaError_t malloc_elsewhere(void)
{
	pthread_t th;
	void *r = NULL;
	pthread_create(&th, NULL, thread_malloc, NULL);
	pthread_join(th, &r);
	return (cudaError_t)(intptr_t)r;
}

static cudaStream_t end_stream;
static void *thread_end(void *arg)
{
	cudaGraph_t g = NULL;
	(void)arg;
	return (void *)(intptr_t)cudaStreamEndCapture(end_stream, &g);
}

static cudaGraphExec_t child_exec;
static void child_launch(void)
{
	_exit((int)cudaGraphLaunch(child_exec, 0));
}

/* Every element of the device array p equals v. */
static int all_equal(const float *p, float v, unsigned n)
{
	float h[256];
	if (n > 256 || cudaMemcpy(h, p, n * sizeof *h, cudaMemcpyDeviceToHost) != cudaSuccess) return 0;
	for (unsigned i = 0; i < n; i++)
		if (h[i] != v) return 0;
	return 1;
}

/* ---- tests ---- */

static void test_grid2d(void)
{
	const unsigned W = 3 * 8, H = 2 * 4, D = 2, N = W * H * D;
	int *dcount;
	unsigned *dwhere;
	CHECK_INT(cudaMalloc(&dcount, N * sizeof(int)), cudaSuccess);
	CHECK_INT(cudaMalloc((void **)&dwhere, N * sizeof(unsigned)), cudaSuccess);
	CHECK_INT(cudaMemset(dcount, 0, N * sizeof(int)), cudaSuccess);
	DC_LAUNCH(k_index, dim3(3, 2), dim3(8, 4, 2), 0, dcount, dwhere, W);
	CHECK_INT(cudaGetLastError(), cudaSuccess);
	int count[N];
	unsigned where[N];
	CHECK_INT(cudaMemcpy(count, dcount, sizeof count, cudaMemcpyDeviceToHost), cudaSuccess);
	CHECK_INT(cudaMemcpy(where, dwhere, sizeof where, cudaMemcpyDefault), cudaSuccess);
	int ones = 0, right = 0;
	for (unsigned z = 0; z < D; z++)
		for (unsigned y = 0; y < H; y++)
			for (unsigned x = 0; x < W; x++) {
				unsigned id = (z * H + y) * W + x;
				ones += count[id] == 1;
				unsigned want = ((x / 8) << 24) | ((y / 4) << 16) | ((x % 8) << 8) | ((y % 4) << 4) | z;
				right += where[id] == want;
			}
	CHECK_INT(ones, N);
	CHECK_INT(right, N);
	CHECK_INT(cudaFree(dcount), cudaSuccess);
	CHECK_INT(cudaFree(dwhere), cudaSuccess);
}

static void test_reduce(void)
{
	enum { B = 4, T = 256 };
	float h[B * T], out[B], *din, *dout;
	for (int i = 0; i < B * T; i++) h[i] = (float)(i % 97);
	CHECK_INT(cudaMalloc(&din, sizeof h), cudaSuccess);
	CHECK_INT(cudaMalloc(&dout, sizeof out), cudaSuccess);
	CHECK_INT(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
	DC_LAUNCH_SYNC(k_reduce, B, T, 0, din, dout);
	CHECK_INT(cudaGetLastError(), cudaSuccess);
	CHECK_INT(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost), cudaSuccess);
	for (int b = 0; b < B; b++) {
		float want = 0;
		for (int t = 0; t < T; t++) want += h[b * T + t];
		CHECK(out[b] == want);
	}
	/* again: stacks come from the pool */
	cudaMemset(dout, 0, sizeof out);
	DC_LAUNCH_SYNC(k_reduce, B, T, 0, din, dout);
	CHECK_INT(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost), cudaSuccess);
	float want0 = 0;
	for (int t = 0; t < T; t++) want0 += h[t];
	CHECK(out[0] == want0);
	cudaFree(din);
	cudaFree(dout);
}

static void test_barriers(void)
{
	enum { N = 128, LIVE = 100 };
	int *d, out[N];
	CHECK_INT(cudaMalloc(&d, sizeof out), cudaSuccess);
	DC_LAUNCH_SYNC(k_rotate, 2, N, 0, d, (unsigned)LIVE);
	CHECK_INT(cudaGetLastError(), cudaSuccess);
	CHECK_INT(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost), cudaSuccess);
	int right = 0;
	for (int t = 0; t < N; t++) {
		/* s[t] = 2 * ((t + 1) % N) after the rotation; thread t reads s[t-1] */
		int want = t >= LIVE ? -1 : 2 * (((t + N - 1) % N + 1) % N);
		right += out[t] == want;
	}
	CHECK_INT(right, N);
	cudaFree(d);
}

static void test_atomics(void)
{
	float *f;
	int *is, *im;
	unsigned long long *u;
	long long *l;
	CHECK_INT(cudaMalloc(&f, 4), cudaSuccess);
	CHECK_INT(cudaMalloc(&is, 4), cudaSuccess);
	CHECK_INT(cudaMalloc(&im, 4), cudaSuccess);
	CHECK_INT(cudaMalloc(&u, 8), cudaSuccess);
	CHECK_INT(cudaMalloc(&l, 8), cudaSuccess);
	cudaMemset(f, 0, 4);
	cudaMemset(is, 0, 4);
	cudaMemset(u, 0, 8);
	cudaMemset(l, 0, 8);
	int m0 = -5;
	cudaMemcpy(im, &m0, 4, cudaMemcpyHostToDevice);
	DC_LAUNCH(k_atomics, 8, 512, 0, f, is, im, u, l);
	float hf;
	int hs, hm;
	unsigned long long hu;
	long long hl;
	cudaMemcpy(&hf, f, 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(&hs, is, 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(&hm, im, 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(&hu, u, 8, cudaMemcpyDeviceToHost);
	cudaMemcpy(&hl, l, 8, cudaMemcpyDeviceToHost);
	CHECK(hf == 2048.0f);
	CHECK_INT(hs, 4095 * 4096 / 2);
	CHECK_INT(hm, 1000);
	CHECK_INT(hu, 3 * 4096);
	CHECK_INT(hl, -4095);
	cudaFree(f);
	cudaFree(is);
	cudaFree(im);
	cudaFree(u);
	cudaFree(l);

	/* return values, on host memory */
	int x = 5;
	CHECK_INT(atomicAdd(&x, 2), 5);
	CHECK_INT(atomicMax(&x, 3), 7);
	CHECK_INT(atomicMin(&x, 1), 7);
	CHECK_INT(atomicExch(&x, 9), 1);
	CHECK_INT(atomicCAS(&x, 8, 0), 9);
	CHECK_INT(x, 9);
	CHECK_INT(atomicCAS(&x, 9, 4), 9);
	CHECK_INT(x, 4);
	unsigned ux = 1;
	CHECK_INT(atomicMax(&ux, 0xffffffffu), 1);
	CHECK_INT(ux, 0xffffffffu);
	float fx = 1.5f;
	CHECK(atomicExch(&fx, 2.5f) == 1.5f);
	double dx = 1.0;
	CHECK(atomicAdd(&dx, 0.25) == 1.0);
	CHECK(dx == 1.25);
	unsigned long long ul = 7;
	CHECK_INT(atomicCAS(&ul, 7ull, 8ull), 7);
	CHECK_INT(ul, 8);
}

static void test_config(void)
{
	CHECK_INT(cudaGetLastError(), cudaSuccess);
	empty_calls = 0;
	DC_LAUNCH(k_noargs, 1, 1025, 0);
	CHECK_INT(cudaPeekAtLastError(), cudaErrorInvalidConfiguration);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidConfiguration);
	CHECK_INT(cudaGetLastError(), cudaSuccess);
	CHECK_INT(empty_calls, 0);
	DC_LAUNCH_SYNC(k_noargs, 1, dim3(32, 33), 0);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidConfiguration);
	DC_LAUNCH(k_noargs, dim3(0, 1), 1, 0);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidConfiguration);
	DC_LAUNCH(k_noargs, 1, dim3(4, 0), 0);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidConfiguration);
	CHECK_INT(empty_calls, 0);
	DC_LAUNCH(k_noargs, 1, 1024, 0);
	CHECK_INT(cudaGetLastError(), cudaSuccess);
	CHECK_INT(empty_calls, 1024);
	/* empty __VA_ARGS__, with and without the trailing comma */
	DC_LAUNCH(k_noargs, dim3(2, 3), 4, 0);
	DC_LAUNCH(k_noargs, 1, 2, 0, );
	DC_LAUNCH_SYNC(k_nothing, 2, 3, 0);
	CHECK_INT(empty_calls, 1024 + 24 + 2);
	CHECK_INT(cudaGetLastError(), cudaSuccess);
}

static void test_memory(void)
{
	float h[1000], back[1000], *a, *b;
	for (int i = 0; i < 1000; i++) h[i] = (float)i * 0.5f;
	CHECK_INT(cudaMalloc(&a, sizeof h), cudaSuccess);
	CHECK_INT(cudaMalloc(&b, sizeof h), cudaSuccess);
	CHECK(dc_sim_is_device_ptr(a) && dc_sim_is_device_ptr(b));
	CHECK((uintptr_t)a % 256 == 0 && (uintptr_t)b % 256 == 0);
	CHECK((char *)a + sizeof h <= (char *)b || (char *)b + sizeof h <= (char *)a);
	CHECK_INT(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
	CHECK_INT(cudaMemcpy(b, a, sizeof h, cudaMemcpyDeviceToDevice), cudaSuccess);
	memset(back, 0, sizeof back);
	CHECK_INT(cudaMemcpy(back, b, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
	CHECK(!memcmp(h, back, sizeof h));
	CHECK_INT(cudaMemcpyAsync(back, a + 10, 4, cudaMemcpyDeviceToHost, 0), cudaSuccess);
	CHECK(back[0] == 5.0f);

	/* kinds that contradict the pointers */
	CHECK_INT(cudaMemcpy(back, h, sizeof h, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidValue);
	CHECK_INT(cudaMemcpy(back, h, sizeof h, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
	CHECK_INT(cudaMemcpy(a, b, sizeof h, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
	CHECK_INT(cudaMemcpy(back, a, sizeof h, cudaMemcpyHostToHost), cudaErrorInvalidValue);
	CHECK_INT(cudaMemcpy(a, h, sizeof h, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
	CHECK_INT(cudaMemcpy(a, h, sizeof h, (cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
	CHECK_INT(cudaMemcpy(back, h, sizeof h, cudaMemcpyHostToHost), cudaSuccess);
	/* past the end of the allocation */
	CHECK_INT(cudaMemcpy(a + 1, h, sizeof h, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
	CHECK_INT(cudaMemset(a, 0, sizeof h + 1), cudaErrorInvalidValue);
	CHECK_INT(cudaMemset(h, 0, 4), cudaErrorInvalidValue);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidValue);
	CHECK_INT(cudaMemsetAsync(a, 0, sizeof h, 0), cudaSuccess);
	CHECK_INT(cudaMemcpy(back, a, sizeof h, cudaMemcpyDefault), cudaSuccess);
	CHECK(back[0] == 0.0f && back[999] == 0.0f);

	/* attributes */
	cudaPointerAttributes at;
	CHECK_INT(cudaPointerGetAttributes(&at, a + 3), cudaSuccess);
	CHECK_INT(at.type, cudaMemoryTypeDevice);
	CHECK_INT(at.device, 0);
	CHECK_INT(cudaPointerGetAttributes(&at, h), cudaSuccess);
	CHECK_INT(at.type, cudaMemoryTypeUnregistered);
	CHECK_INT(cudaPointerGetAttributes(&at, NULL), cudaSuccess);
	CHECK_INT(at.type, cudaMemoryTypeUnregistered);

	/* host access faults, also after a launch touched the memory */
	DC_LAUNCH(k_fill, 4, 256, 0, a, 1.0f, 1000u);
	CHECK_INT(cudaMemcpy(back, a, 8, cudaMemcpyDeviceToHost), cudaSuccess);
	CHECK(back[0] == 1.0f && back[1] == 2.0f);
	child_ptr = a;
	int st = in_child(child_read);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	st = in_child(child_write);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	st = in_child(child_sync_plain);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);

	/* free */
	CHECK_INT(cudaFree(h), cudaErrorInvalidDevicePointer);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidDevicePointer);
	CHECK_INT(cudaFree(a + 1), cudaErrorInvalidDevicePointer);
	CHECK_INT(cudaFree(NULL), cudaSuccess);
	CHECK_INT(cudaFree(a), cudaSuccess);
	CHECK_INT(cudaFree(a), cudaErrorInvalidDevicePointer);
	CHECK_INT(cudaFree(b), cudaSuccess);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidDevicePointer);

	float *hp;
	CHECK_INT(cudaMallocHost(&hp, 100), cudaSuccess);
	CHECK(hp && (uintptr_t)hp % 256 == 0 && !dc_sim_is_device_ptr(hp));
	hp[24] = 1;
	CHECK_INT(cudaFreeHost(hp), cudaSuccess);

	float *big;
	CHECK_INT(cudaMalloc(&big, 64u << 20), cudaSuccess);
	CHECK_INT(cudaMemset(big, 1, 64u << 20), cudaSuccess);
	CHECK_INT(cudaFree(big), cudaSuccess);
	void *z = (void *)1;
	CHECK_INT(cudaMalloc(&z, 0), cudaSuccess);
	CHECK_INT(cudaFree(z), cudaSuccess);
}

static void test_math(void)
{
	float *d, h[4];
	cudaMalloc(&d, sizeof h);
	DC_LAUNCH(k_math, 1, 1, 0, d);
	cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
	CHECK(fabsf(h[0] - 2.0f) < 1e-6f);
	CHECK(fabsf(h[1] - 8.75f) < 1e-5f);
	CHECK(fabsf(h[2] - 7.75f) < 1e-5f);
	CHECK(fabsf(h[3] - 1.25f) < 1e-6f);
	cudaFree(d);
}

static void test_env(void)
{
	int n = -1;
	void *p = NULL;
	CHECK_INT(cudaGetDeviceCount(&n), cudaSuccess);
	CHECK_INT(n, 1);
	CHECK_INT(cudaSetDevice(0), cudaSuccess);
	CHECK_INT(cudaSetDevice(1), cudaErrorInvalidDevice);
	CHECK_INT(cudaGetDevice(&n), cudaSuccess);
	CHECK_INT(n, 0);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidDevice);

	setenv("DOCCC_SIM_NO_DEVICE", "1", 1);
	CHECK_INT(cudaGetDeviceCount(&n), cudaErrorNoDevice);
	CHECK_INT(n, 0);
	CHECK_INT(cudaMalloc(&p, 16), cudaErrorNoDevice);
	CHECK(p == NULL);
	CHECK_INT(cudaGetLastError(), cudaErrorNoDevice);
	unsetenv("DOCCC_SIM_NO_DEVICE");
	CHECK_INT(cudaGetDeviceCount(&n), cudaSuccess);
	CHECK_INT(n, 1);

	setenv("DOCCC_SIM_DEVICE_MEMORY", "10000", 1);
	void *q = NULL;
	CHECK_INT(cudaMalloc(&p, 6000), cudaSuccess);
	CHECK_INT(cudaMalloc(&q, 6000), cudaErrorMemoryAllocation);
	CHECK_INT(cudaGetLastError(), cudaErrorMemoryAllocation);
	CHECK_INT(cudaFree(p), cudaSuccess);
	CHECK_INT(cudaMalloc(&q, 6000), cudaSuccess);
	CHECK_INT(cudaFree(q), cudaSuccess);
	unsetenv("DOCCC_SIM_DEVICE_MEMORY");

	CHECK_STR(cudaGetErrorString(cudaErrorNoDevice), "no CUDA-capable device is detected");
	CHECK_STR(cudaGetErrorString(cudaErrorInsufficientDriver),
	          "CUDA driver version is insufficient for CUDA runtime version");
	CHECK_STR(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
	CHECK_STR(cudaGetErrorName(cudaErrorNoDevice), "cudaErrorNoDevice");
	CHECK_STR(cudaGetErrorName(cudaSuccess), "cudaSuccess");

	cudaStream_t s;
	CHECK_INT(cudaStreamCreate(&s), cudaSuccess);
	DC_LAUNCH(k_nothing, 1, 1, s);
	CHECK_INT(cudaStreamSynchronize(s), cudaSuccess);
	CHECK_INT(cudaStreamDestroy(s), cudaSuccess);
	CHECK_INT(cudaDeviceSynchronize(), cudaSuccess);
}

static void test_threads(void)
{
	pthread_t th[4];
	for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_main, NULL);
	int bad = 0;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		bad += (int)(intptr_t)r;
	}
	CHECK_INT(bad, 0);
}

/* Capture on s: a = 0; a = a * 2 + 1 (fill: a[i] = 2 + i); a = a * k + 1; out = a. */
static cudaGraph_t capture_chain(cudaStream_t s, float *a, float *out, unsigned n, int fill, float k)
{
	cudaGraph_t g = NULL;
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	CHECK_INT(cudaMemsetAsync(a, 0, n * sizeof(float), s), cudaSuccess);
	if (fill)
		DC_LAUNCH(k_fill, 1, 256, s, a, 2.0f, n);
	else
		DC_LAUNCH(k_axpy, 1, 256, s, a, 2.0f, n);
	DC_LAUNCH(k_axpy, 1, 256, s, a, k, n);
	CHECK_INT(cudaMemcpyAsync(out, a, n * sizeof(float), cudaMemcpyDeviceToDevice, s), cudaSuccess);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

/* Stream capture: recording in order, replay, exec update, and what CUDA
 * refuses during a capture (which also ends in an invalidated capture,
 * never a stream left capturing). */
static void test_capture(void)
{
	const unsigned N = 256;
	float *a, *b, *b2;
	cudaStream_t s, sb;
	cudaGraph_t g = NULL, g2 = NULL;
	cudaGraphExec_t x = NULL;
	enum cudaStreamCaptureStatus st;
	CHECK_INT(cudaMalloc(&a, N * sizeof(float)), cudaSuccess);
	CHECK_INT(cudaMalloc(&b, N * sizeof(float)), cudaSuccess);
	CHECK_INT(cudaMalloc(&b2, N * sizeof(float)), cudaSuccess);
	CHECK_INT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK_INT(cudaStreamCreate(&sb), cudaSuccess);
	CHECK_INT(cudaStreamCreateWithFlags(&sb, 4), cudaErrorInvalidValue);
	CHECK_INT(cudaStreamCreate(&sb), cudaSuccess);
	(void)cudaGetLastError();

	/* recorded, not run: a memset, two launches, a copy */
	CHECK_INT(cudaMemset(a, 0, N * sizeof(float)), cudaSuccess);
	CHECK_INT(cudaMemset(b, 0, N * sizeof(float)), cudaSuccess);
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	CHECK_INT(cudaStreamIsCapturing(s, &st), cudaSuccess);
	CHECK_INT(st, cudaStreamCaptureStatusActive);
	CHECK_INT(cudaStreamIsCapturing(sb, &st), cudaSuccess);
	CHECK_INT(st, cudaStreamCaptureStatusNone);
	CHECK_INT(cudaMemsetAsync(a, 0, N * sizeof(float), s), cudaSuccess);
	DC_LAUNCH(k_axpy, 1, 256, s, a, 2.0f, N);
	DC_LAUNCH(k_axpy, 1, 256, s, a, 3.0f, N);
	CHECK_INT(cudaMemcpyAsync(b, a, N * sizeof(float), cudaMemcpyDeviceToDevice, s), cudaSuccess);
	CHECK_INT(cudaGetLastError(), cudaSuccess);
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaErrorIllegalState);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(g != NULL);
	CHECK_INT(cudaStreamIsCapturing(s, &st), cudaSuccess);
	CHECK_INT(st, cudaStreamCaptureStatusNone);
	CHECK(all_equal(b, 0.0f, N));
	CHECK_INT(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
	CHECK_INT(cudaGraphDestroy(g), cudaSuccess); /* the executable graph keeps its operations */
	CHECK_INT(cudaGraphLaunch(x, s), cudaSuccess);
	CHECK(all_equal(b, 4.0f, N)); /* (0 * 2 + 1) * 3 + 1, then copied */
	CHECK_INT(cudaMemset(b, 0, N * sizeof(float)), cudaSuccess);
	CHECK_INT(cudaGraphLaunch(x, sb), cudaSuccess); /* any stream; the memset starts it over */
	CHECK(all_equal(b, 4.0f, N));
	CHECK_INT(cudaGraphLaunch(x, 0), cudaSuccess);
	CHECK(all_equal(a, 4.0f, N));

	/* the same shape with other pointers updates x in place; another shape does not */
	g2 = capture_chain(s, a, b2, N, 0, 5.0f);
	cudaGraphExecUpdateResultInfo info;
	CHECK_INT(cudaGraphExecUpdate(x, g2, &info), cudaSuccess);
	CHECK_INT(info.result, cudaGraphExecUpdateSuccess);
	CHECK_INT(cudaGraphDestroy(g2), cudaSuccess);
	CHECK_INT(cudaMemset(b2, 0, N * sizeof(float)), cudaSuccess);
	CHECK_INT(cudaGraphLaunch(x, s), cudaSuccess);
	CHECK(all_equal(b2, 6.0f, N));
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	DC_LAUNCH(k_axpy, 1, 256, s, a, 2.0f, N);
	CHECK_INT(cudaStreamEndCapture(s, &g2), cudaSuccess);
	CHECK_INT(cudaGraphExecUpdate(x, g2, &info), cudaErrorGraphExecUpdateFailure);
	CHECK_INT(info.result, cudaGraphExecUpdateErrorTopologyChanged);
	CHECK_INT(cudaGraphDestroy(g2), cudaSuccess);
	g2 = capture_chain(s, a, b2, N, 1, 5.0f);
	CHECK_INT(cudaGraphExecUpdate(x, g2, &info), cudaErrorGraphExecUpdateFailure);
	CHECK_INT(info.result, cudaGraphExecUpdateErrorFunctionChanged);
	CHECK_INT(cudaGraphDestroy(g2), cudaSuccess);
	CHECK_INT(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);
	CHECK_INT(cudaGraphLaunch(x, s), cudaSuccess); /* unchanged by a refused update */
	CHECK(all_equal(b2, 6.0f, N));

	/* a graph launched into a capture is recorded into it */
	CHECK_INT(cudaStreamBeginCapture(sb, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	CHECK_INT(cudaGraphLaunch(x, sb), cudaSuccess);
	DC_LAUNCH(k_axpy, 1, 256, sb, b2, 2.0f, N);
	CHECK_INT(cudaStreamEndCapture(sb, &g), cudaSuccess);
	cudaGraphExec_t x2 = NULL;
	CHECK_INT(cudaGraphInstantiateWithFlags(&x2, g, 0), cudaSuccess);
	CHECK_INT(cudaGraphDestroy(g), cudaSuccess);
	CHECK_INT(cudaGraphLaunch(x2, s), cudaSuccess);
	CHECK(all_equal(b2, 13.0f, N));
	CHECK_INT(cudaGraphExecDestroy(x2), cudaSuccess);
	CHECK_INT(cudaGetLastError(), cudaSuccess);

	/* what cannot be captured: the legacy stream, a caller's token, a capture twice, an end without one */
	CHECK_INT(cudaStreamBeginCapture(0, cudaStreamCaptureModeThreadLocal), cudaErrorStreamCaptureUnsupported);
	CHECK_INT(cudaStreamBeginCapture((cudaStream_t)0x1000, cudaStreamCaptureModeThreadLocal), cudaErrorInvalidResourceHandle);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
	CHECK_INT(cudaStreamIsCapturing((cudaStream_t)0x1000, &st), cudaSuccess);
	CHECK_INT(st, cudaStreamCaptureStatusNone);

	/* synchronizing the capturing stream invalidates the capture, which still ends */
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	DC_LAUNCH(k_axpy, 1, 256, s, a, 2.0f, N);
	CHECK_INT(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
	CHECK_INT(cudaStreamIsCapturing(s, &st), cudaSuccess);
	CHECK_INT(st, cudaStreamCaptureStatusInvalidated);
	CHECK_INT(cudaMemsetAsync(a, 0, 4, s), cudaErrorStreamCaptureInvalidated);
	g = (cudaGraph_t)1;
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	CHECK(g == NULL);
	CHECK_INT(cudaStreamIsCapturing(s, &st), cudaSuccess);
	CHECK_INT(st, cudaStreamCaptureStatusNone);
	CHECK_INT(cudaStreamSynchronize(s), cudaSuccess);

	/* thread-local mode: this thread may not allocate or copy synchronously, others may */
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	CHECK_INT(malloc_elsewhere(), cudaSuccess);
	CHECK_INT(cudaStreamIsCapturing(s, &st), cudaSuccess);
	CHECK_INT(st, cudaStreamCaptureStatusActive);
	void *p = NULL;
	CHECK_INT(cudaMalloc(&p, 64), cudaErrorStreamCaptureUnsupported);
	CHECK_INT(cudaStreamIsCapturing(s, &st), cudaSuccess);
	CHECK_INT(st, cudaStreamCaptureStatusInvalidated);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	float h4[4];
	CHECK_INT(cudaMemcpy(h4, a, sizeof h4, cudaMemcpyDeviceToHost), cudaErrorStreamCaptureUnsupported);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	/* ... and the capture must end on its own thread */
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	end_stream = s;
	pthread_t th;
	void *r = NULL;
	pthread_create(&th, NULL, thread_end, NULL);
	pthread_join(th, &r);
	CHECK_INT((intptr_t)r, cudaErrorStreamCaptureWrongThread);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK_INT(cudaGraphDestroy(g), cudaSuccess);

	/* global mode: no thread may */
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK_INT(malloc_elsewhere(), cudaErrorStreamCaptureUnsupported);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	CHECK_INT(malloc_elsewhere(), cudaSuccess);

	/* legacy-stream work while a blocking stream captures: refused, not run */
	CHECK_INT(cudaStreamBeginCapture(sb, cudaStreamCaptureModeRelaxed), cudaSuccess);
	CHECK_INT(cudaMemset(a, 0, N * sizeof(float)), cudaErrorStreamCaptureImplicit);
	CHECK_INT(cudaStreamEndCapture(sb, &g), cudaErrorStreamCaptureInvalidated);
	CHECK_INT(cudaStreamBeginCapture(sb, cudaStreamCaptureModeRelaxed), cudaSuccess);
	DC_LAUNCH(k_axpy, 1, 256, 0, a, 0.0f, N);
	CHECK_INT(cudaGetLastError(), cudaErrorStreamCaptureImplicit);
	CHECK_INT(cudaStreamEndCapture(sb, &g), cudaErrorStreamCaptureInvalidated);
	CHECK(all_equal(a, 6.0f, N)); /* the refused launch did not run */
	(void)cudaGetLastError();
	/* ... but not while a non-blocking one does */
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
	DC_LAUNCH(k_axpy, 1, 256, 0, a, 0.0f, N);
	CHECK_INT(cudaMemsetAsync(a, 0, 4, 0), cudaSuccess);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK_INT(cudaGraphDestroy(g), cudaSuccess);
	CHECK_INT(cudaGetLastError(), cudaSuccess);

	/* a bad launch or copy in a capture fails there and invalidates it */
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	DC_LAUNCH(k_axpy, 1, 2048, s, a, 2.0f, N);
	CHECK_INT(cudaGetLastError(), cudaErrorInvalidConfiguration);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	CHECK_INT(cudaMemcpyAsync(a, b, (N + 1) * sizeof(float), cudaMemcpyDeviceToDevice, s), cudaErrorInvalidValue);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	(void)cudaGetLastError();

	/* events: legacy-stream ordering works; a fork of another stream into a capture is refused */
	cudaEvent_t ev;
	CHECK_INT(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), cudaSuccess);
	CHECK_INT(cudaEventRecord(ev, 0), cudaSuccess);
	CHECK_INT(cudaStreamWaitEvent(s, ev, 0), cudaSuccess);
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	CHECK_INT(cudaEventRecord(ev, s), cudaSuccess);
	CHECK_INT(cudaStreamWaitEvent(sb, ev, 0), cudaErrorStreamCaptureUnsupported);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	CHECK_INT(cudaEventDestroy(ev), cudaSuccess);
	(void)cudaGetLastError();

	/* a destroyed stream takes its unfinished capture along */
	cudaStream_t s3;
	CHECK_INT(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking), cudaSuccess);
	CHECK_INT(cudaStreamBeginCapture(s3, cudaStreamCaptureModeRelaxed), cudaSuccess);
	DC_LAUNCH(k_axpy, 1, 256, s3, a, 2.0f, N);
	CHECK_INT(cudaStreamDestroy(s3), cudaSuccess);
	CHECK_INT(cudaStreamDestroy((cudaStream_t)0x1000), cudaErrorInvalidResourceHandle);
	CHECK_INT(malloc_elsewhere(), cudaSuccess);
	(void)cudaGetLastError();

	/* a replay after its memory was freed: a kernel faults, a copy fails its check */
	cudaGraphExec_t xk = NULL;
	CHECK_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	DC_LAUNCH(k_axpy, 1, 256, s, b2, 2.0f, N);
	CHECK_INT(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK_INT(cudaGraphInstantiate(&xk, g, 0), cudaSuccess);
	CHECK_INT(cudaGraphDestroy(g), cudaSuccess);
	CHECK_INT(cudaFree(b2), cudaSuccess);
	child_exec = xk;
	int ws = in_child(child_launch);
	CHECK(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSEGV);
	child_exec = x;
	ws = in_child(child_launch);
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == cudaErrorInvalidValue);
	CHECK_INT(cudaGraphExecDestroy(xk), cudaSuccess);

	CHECK_INT(cudaGraphExecDestroy(x), cudaSuccess);
	CHECK_INT(cudaStreamDestroy(s), cudaSuccess);
	CHECK_INT(cudaStreamDestroy(sb), cudaSuccess);
	CHECK_INT(cudaFree(a), cudaSuccess);
	CHECK_INT(cudaFree(b), cudaSuccess);
}

int main(void)
{
	test_grid2d();
	test_reduce();
	test_barriers();
	test_atomics();
	test_config();
	test_memory();
	test_math();
	test_env();
	test_threads();
	test_capture();
	return check_done("gpusim_test");
}
