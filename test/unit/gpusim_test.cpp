/*
 * gpusim_test.cpp - the CPU simulation of CUDA in backends/gpu_sim.h:
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
#include "../../backends/gpu_sim.h"
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
	return check_done("gpusim_test");
}
