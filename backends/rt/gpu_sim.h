/*
 * gpu_sim.h - the CUDA built-ins and a subset of the CUDA runtime on the
 * CPU, so the CUDA source doccc emits compiles and runs in CI without a GPU
 * (clang++ -std=c++17 -DDOCCC_SIM -x c++).
 *
 * Kernels are plain functions. DC_LAUNCH wraps the call in a lambda that
 * captures the arguments by value and runs it once per GPU thread, blocks
 * one after another on the calling OS thread, threads of a block in order
 * (x fastest, then y, then z), setting threadIdx/blockIdx/blockDim/gridDim
 * (thread_local, so launches on different OS threads do not interfere)
 * before each call. Since a block runs on one OS thread at a time,
 * __shared__ is `static thread_local`: that storage is the block's shared
 * memory. DC_LAUNCH_SYNC runs each GPU thread of a block as a fiber
 * (ucontext, 256 KiB mmap'd stacks with a guard page, pooled across blocks
 * and launches): fiber 0 runs until it returns or reaches __syncthreads(),
 * then fiber 1, ...; when every live fiber waits at the barrier all are
 * released and the round starts again. A fiber that has returned takes no
 * further part in barriers. __syncthreads() outside DC_LAUNCH_SYNC aborts
 * with a message. Launches are synchronous; a stream is a token (any
 * value works, 0 is the legacy stream) unless it is captured.
 *
 * Stream capture (cudaStreamBeginCapture ... cudaStreamEndCapture) is real:
 * while a stream of this registry captures, what is issued on it (launches,
 * cudaMemcpyAsync, cudaMemsetAsync) is checked as CUDA checks it at issue
 * time and recorded as a closure into the graph instead of running;
 * cudaGraphInstantiate makes the list an executable graph, cudaGraphLaunch
 * runs it in order, cudaGraphExecUpdate swaps in a graph of the same shape.
 * What CUDA refuses during a capture fails here too and invalidates it:
 * synchronizing the capturing stream; allocating, freeing, synchronous
 * copies and memsets from the capturing thread (ThreadLocal, Global mode)
 * or any thread (Global); legacy-stream work while a blocking stream
 * captures (cudaErrorStreamCaptureImplicit). Forks and joins of other
 * streams into a capture through events are not simulated (refused).
 * DOCCC_SIM_TRACE=1 prints every capture and graph call on stderr.
 *
 * "Device" memory lives in one fixed range, [DC_SIM_BASE, DC_SIM_BASE +
 * DC_SIM_SPAN), mapped with MAP_FIXED_NOREPLACE by a bump cursor that skips
 * what is already mapped (several libraries in one process each have their
 * own copy of this header and so their own registry; they share the range
 * and never map over each other). Each allocation is followed by an
 * unmapped guard page and its pointer is right-aligned (to 256 bytes) in its
 * mapping, so overruns past the end fault. Invariant: an allocation is
 * PROT_NONE while its pin count is 0; a launch pins every live allocation of
 * this registry, a copy or memset pins only what it touches, and the last
 * unpin protects it again, so host code that dereferences a device pointer
 * gets SIGSEGV. cudaFree waits until the allocation is unpinned. Errors are
 * recorded as the calling thread's last error. Test hooks, read at each
 * call: DOCCC_SIM_NO_DEVICE=1 (no device), DOCCC_SIM_DEVICE_MEMORY=N (cap on
 * the live bytes), DOCCC_SIM_CAPTURE_FAIL=1 (a launch issued into a capture
 * fails with cudaErrorStreamCaptureUnsupported). Everything is static: each including library has its own
 * state. Linux x86-64 only.
 */
#ifndef DOCCC_GPU_SIM_H
#define DOCCC_GPU_SIM_H

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#if defined(__SANITIZE_ADDRESS__)
#define DC_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DC_SIM_ASAN 1
#endif
#endif
#ifdef DC_SIM_ASAN
extern "C" {
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
}
#endif

/* ---- qualifiers and index types ---- */

#define __global__
#define __device__
#define __host__
#define __forceinline__
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __align__(n) __attribute__((aligned(n)))

struct uint3 {
	unsigned x, y, z;
};

struct dim3 {
	unsigned x, y, z;
	constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
	constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
	constexpr operator uint3() const { return uint3{x, y, z}; }
};

static thread_local uint3 threadIdx;
static thread_local uint3 blockIdx;
static thread_local dim3 blockDim;
static thread_local dim3 gridDim;

/* ---- runtime types ---- */

typedef enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInvalidConfiguration = 9,
	cudaErrorInvalidDevicePointer = 17,
	cudaErrorInvalidMemcpyDirection = 21,
	cudaErrorInsufficientDriver = 35,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorIllegalState = 401,
	cudaErrorStreamCaptureUnsupported = 900,
	cudaErrorStreamCaptureInvalidated = 901,
	cudaErrorStreamCaptureImplicit = 906,
	cudaErrorStreamCaptureWrongThread = 908,
	cudaErrorGraphExecUpdateFailure = 910
} cudaError_t;

typedef struct dc_sim_stream *cudaStream_t;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4
};

enum cudaMemoryType {
	cudaMemoryTypeUnregistered = 0,
	cudaMemoryTypeHost = 1,
	cudaMemoryTypeDevice = 2,
	cudaMemoryTypeManaged = 3
};

struct cudaPointerAttributes {
	enum cudaMemoryType type;
	int device;
	void *devicePointer;
	void *hostPointer;
};

struct dc_sim_stream {
	unsigned magic;
	unsigned flags; /* cudaStreamNonBlocking or 0 */
};

/* ---- state ---- */

#define DC_SIM_BASE 0x3e0000000000ull
#define DC_SIM_SPAN (1ull << 40)
#define DC_SIM_STACK (256u << 10)
#define DC_SIM_MAX_THREADS 1024u

typedef struct {
	uintptr_t map;   /* start of the mapping */
	size_t maplen;   /* length of the mapping (pages) */
	uintptr_t ptr;   /* what cudaMalloc returned */
	size_t size;     /* requested bytes */
	unsigned pins;   /* > 0: PROT_READ|PROT_WRITE */
} dc_sim_alloc;

static struct {
	pthread_mutex_t mu;
	pthread_cond_t unpinned;
	dc_sim_alloc *a;
	size_t n, cap;
	size_t live;        /* sum of the live allocations' sizes */
	uintptr_t cursor;   /* next address to try, 0 = DC_SIM_BASE */
	void **stacks;      /* pool of fiber stacks (usable part) */
	size_t nstacks, capstacks;
} dc_sim_g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, 0};

static thread_local cudaError_t dc_sim_last_error;

static inline cudaError_t dc_sim_err(cudaError_t e)
{
	if (e != cudaSuccess) dc_sim_last_error = e;
	return e;
}

static inline int dc_sim_env_on(const char *name)
{
	const char *s = getenv(name);
	return s && *s && strcmp(s, "0") != 0;
}

static inline int dc_sim_no_device(void)
{
	return dc_sim_env_on("DOCCC_SIM_NO_DEVICE");
}

static inline size_t dc_sim_memory_cap(void)
{
	const char *s = getenv("DOCCC_SIM_DEVICE_MEMORY");
	if (!s || !*s) return (size_t)DC_SIM_SPAN;
	return (size_t)strtoull(s, NULL, 0);
}

static inline size_t dc_sim_page(void)
{
	static const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return pg;
}

static inline int dc_sim_is_device_ptr(const void *p)
{
	uintptr_t u = (uintptr_t)p;
	return u >= DC_SIM_BASE && u < DC_SIM_BASE + DC_SIM_SPAN;
}

/* Index of the allocation holding address u, or -1. Lock held. */
static inline long dc_sim_find_locked(uintptr_t u)
{
	for (size_t i = 0; i < dc_sim_g.n; i++)
		if (u >= dc_sim_g.a[i].ptr && u - dc_sim_g.a[i].ptr < dc_sim_g.a[i].size) return (long)i;
	return -1;
}

static inline void dc_sim_pin_locked(dc_sim_alloc *a)
{
	if (a->pins++ == 0) mprotect((void *)a->map, a->maplen, PROT_READ | PROT_WRITE);
}

static inline void dc_sim_unpin_locked(uintptr_t ptr)
{
	for (size_t i = 0; i < dc_sim_g.n; i++) {
		dc_sim_alloc *a = &dc_sim_g.a[i];
		if (a->ptr != ptr) continue;
		if (a->pins && --a->pins == 0) {
			mprotect((void *)a->map, a->maplen, PROT_NONE);
			pthread_cond_broadcast(&dc_sim_g.unpinned);
		}
		return;
	}
}

/* Pin [p, p+n) inside one allocation; *base gets its pointer for unpinning. */
static inline cudaError_t dc_sim_pin_range(const void *p, size_t n, uintptr_t *base)
{
	uintptr_t u = (uintptr_t)p;
	cudaError_t e = cudaErrorInvalidValue;
	pthread_mutex_lock(&dc_sim_g.mu);
	long i = dc_sim_find_locked(u);
	if (i >= 0) {
		dc_sim_alloc *a = &dc_sim_g.a[i];
		if (n <= a->size - (u - a->ptr)) {
			dc_sim_pin_locked(a);
			*base = a->ptr;
			e = cudaSuccess;
		}
	}
	pthread_mutex_unlock(&dc_sim_g.mu);
	return e;
}

static inline void dc_sim_unpin(uintptr_t base)
{
	pthread_mutex_lock(&dc_sim_g.mu);
	dc_sim_unpin_locked(base);
	pthread_mutex_unlock(&dc_sim_g.mu);
}

/* ---- device management ---- */

static inline cudaError_t cudaGetDeviceCount(int *count)
{
	if (!count) return dc_sim_err(cudaErrorInvalidValue);
	if (dc_sim_no_device()) {
		*count = 0;
		return dc_sim_err(cudaErrorNoDevice);
	}
	*count = 1;
	return cudaSuccess;
}

static inline cudaError_t cudaSetDevice(int dev)
{
	if (dc_sim_no_device()) return dc_sim_err(cudaErrorNoDevice);
	if (dev != 0) return dc_sim_err(cudaErrorInvalidDevice);
	return cudaSuccess;
}

static inline cudaError_t cudaGetDevice(int *dev)
{
	if (!dev) return dc_sim_err(cudaErrorInvalidValue);
	if (dc_sim_no_device()) return dc_sim_err(cudaErrorNoDevice);
	*dev = 0;
	return cudaSuccess;
}

static inline cudaError_t dc_sim_capture_guard(int legacy, int unsafe);

static inline cudaError_t cudaDeviceSynchronize(void)
{
	if (dc_sim_no_device()) return dc_sim_err(cudaErrorNoDevice);
	return dc_sim_capture_guard(1, 1);
}

static inline cudaError_t cudaGetLastError(void)
{
	cudaError_t e = dc_sim_last_error;
	dc_sim_last_error = cudaSuccess;
	return e;
}

static inline cudaError_t cudaPeekAtLastError(void)
{
	return dc_sim_last_error;
}

static inline const char *cudaGetErrorString(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorMemoryAllocation: return "out of memory";
	case cudaErrorInvalidConfiguration: return "invalid configuration argument";
	case cudaErrorInvalidDevicePointer: return "invalid device pointer";
	case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
	case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
	case cudaErrorNoDevice: return "no CUDA-capable device is detected";
	case cudaErrorInvalidDevice: return "invalid device ordinal";
	case cudaErrorInvalidResourceHandle: return "invalid resource handle";
	case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
	case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
	case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
	case cudaErrorStreamCaptureImplicit: return "operation would make the legacy stream depend on a capturing blocking stream";
	case cudaErrorStreamCaptureWrongThread: return "attempt to terminate a thread-local capture sequence from another thread";
	case cudaErrorGraphExecUpdateFailure: return "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update";
	}
	return "unrecognized error code";
}

static inline const char *cudaGetErrorName(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "cudaSuccess";
	case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
	case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
	case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
	case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
	case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
	case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
	case cudaErrorNoDevice: return "cudaErrorNoDevice";
	case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
	case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
	case cudaErrorIllegalState: return "cudaErrorIllegalState";
	case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
	case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
	case cudaErrorStreamCaptureImplicit: return "cudaErrorStreamCaptureImplicit";
	case cudaErrorStreamCaptureWrongThread: return "cudaErrorStreamCaptureWrongThread";
	case cudaErrorGraphExecUpdateFailure: return "cudaErrorGraphExecUpdateFailure";
	}
	return "unrecognized error code";
}

/* ---- streams (synchronous) ---- */

#define cudaStreamDefault 0x00u
#define cudaStreamNonBlocking 0x01u

/* The state of streams, captures and graphs (one lock): the streams this
 * copy of the header created, so that a handle is told from a caller's
 * token or another library's stream without dereferencing it, and the
 * captures under way. */
typedef struct dc_sim_capture dc_sim_capture;
static struct {
	pthread_mutex_t mu;
	cudaStream_t *s;
	size_t n, cap;
	dc_sim_capture *caps;
} dc_sim_sg = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0};

/* Is s a stream of this registry? Lock held. */
static inline int dc_sim_stream_known_locked(cudaStream_t s)
{
	for (size_t i = 0; s && i < dc_sim_sg.n; i++)
		if (dc_sim_sg.s[i] == s) return 1;
	return 0;
}

static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
	if (!s || (flags & ~cudaStreamNonBlocking)) return dc_sim_err(cudaErrorInvalidValue);
	if (dc_sim_no_device()) return dc_sim_err(cudaErrorNoDevice);
	cudaStream_t ns = (cudaStream_t)calloc(1, sizeof *ns);
	if (!ns) return dc_sim_err(cudaErrorMemoryAllocation);
	ns->magic = 0x5715u;
	ns->flags = flags;
	pthread_mutex_lock(&dc_sim_sg.mu);
	if (dc_sim_sg.n == dc_sim_sg.cap) {
		size_t cap = dc_sim_sg.cap ? 2 * dc_sim_sg.cap : 16;
		cudaStream_t *na = (cudaStream_t *)realloc(dc_sim_sg.s, cap * sizeof *na);
		if (!na) {
			pthread_mutex_unlock(&dc_sim_sg.mu);
			free(ns);
			return dc_sim_err(cudaErrorMemoryAllocation);
		}
		dc_sim_sg.s = na;
		dc_sim_sg.cap = cap;
	}
	dc_sim_sg.s[dc_sim_sg.n++] = ns;
	pthread_mutex_unlock(&dc_sim_sg.mu);
	*s = ns;
	return cudaSuccess;
}

static inline cudaError_t cudaStreamCreate(cudaStream_t *s)
{
	return cudaStreamCreateWithFlags(s, cudaStreamDefault);
}

/* ---- stream capture and graphs ----
 * A graph is a list of operations, each a reference-counted closure (the
 * graph and every executable graph made from it hold a reference), run in
 * the order they were issued. An operation's kind is what
 * cudaGraphExecUpdate compares: the kernel a launch runs, or the copy or
 * memset function. */

typedef struct dc_sim_op dc_sim_op;
struct dc_sim_op {
	unsigned refs;
	void (*kind)(void *);
	cudaError_t (*run)(dc_sim_op *);
	void (*drop)(dc_sim_op *);
};

struct dc_sim_graph {
	dc_sim_op **ops;
	size_t n, cap;
};

struct dc_sim_graph_exec {
	dc_sim_op **ops;
	size_t n;
};

typedef struct dc_sim_graph *cudaGraph_t;
typedef struct dc_sim_graph_exec *cudaGraphExec_t;
typedef struct dc_sim_graph_node *cudaGraphNode_t; /* never made: update results name no node */

enum cudaStreamCaptureMode {
	cudaStreamCaptureModeGlobal = 0,
	cudaStreamCaptureModeThreadLocal = 1,
	cudaStreamCaptureModeRelaxed = 2
};

enum cudaStreamCaptureStatus {
	cudaStreamCaptureStatusNone = 0,
	cudaStreamCaptureStatusActive = 1,
	cudaStreamCaptureStatusInvalidated = 2
};

enum cudaGraphExecUpdateResult {
	cudaGraphExecUpdateSuccess = 0,
	cudaGraphExecUpdateError = 1,
	cudaGraphExecUpdateErrorTopologyChanged = 2,
	cudaGraphExecUpdateErrorNodeTypeChanged = 3,
	cudaGraphExecUpdateErrorFunctionChanged = 4
};

typedef struct {
	enum cudaGraphExecUpdateResult result;
	cudaGraphNode_t errorNode;
	cudaGraphNode_t errorFromNode;
} cudaGraphExecUpdateResultInfo;

struct dc_sim_capture {
	cudaStream_t s;
	pthread_t thread;           /* the thread that began it */
	enum cudaStreamCaptureMode mode;
	int blocking;               /* s synchronizes with the legacy stream */
	cudaError_t broken;         /* the error that invalidated it, or cudaSuccess */
	cudaGraph_t g;
	dc_sim_capture *next;
};

__attribute__((format(printf, 1, 2))) static inline void dc_sim_trace(const char *fmt, ...)
{
	if (!dc_sim_env_on("DOCCC_SIM_TRACE")) return;
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "doccc simulation: %s\n", line);
}

static inline void dc_sim_op_unref(dc_sim_op *op)
{
	if (__atomic_sub_fetch(&op->refs, 1, __ATOMIC_ACQ_REL) == 0) op->drop(op);
}

static inline void dc_sim_graph_free(cudaGraph_t g)
{
	for (size_t i = 0; i < g->n; i++) dc_sim_op_unref(g->ops[i]);
	free(g->ops);
	free(g);
}

/* The capture of stream s, or NULL. Lock held. */
static inline dc_sim_capture *dc_sim_capture_find_locked(cudaStream_t s)
{
	for (dc_sim_capture *c = dc_sim_sg.caps; c; c = c->next)
		if (c->s == s) return c;
	return NULL;
}

static inline void dc_sim_capture_break_locked(dc_sim_capture *c, cudaError_t e)
{
	if (c->broken != cudaSuccess) return;
	c->broken = e;
	dc_sim_trace("capture invalidated: %s", cudaGetErrorName(e));
}

static inline enum cudaStreamCaptureStatus dc_sim_capture_status(cudaStream_t s)
{
	enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	pthread_mutex_lock(&dc_sim_sg.mu);
	dc_sim_capture *c = dc_sim_capture_find_locked(s);
	if (c) st = c->broken == cudaSuccess ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusInvalidated;
	pthread_mutex_unlock(&dc_sim_sg.mu);
	return st;
}

/* CUDA's rules for work that is not recorded while captures are under way,
 * checked before it runs: work on the legacy stream (legacy) would wait for
 * a capturing blocking stream (cudaErrorStreamCaptureImplicit); a
 * potentially unsafe call (unsafe: allocating, freeing, synchronous copies
 * and memsets, synchronizing the device) is refused while this thread
 * captures in ThreadLocal or Global mode, or any thread in Global mode
 * (cudaErrorStreamCaptureUnsupported). Either invalidates the captures it
 * concerns. */
static inline cudaError_t dc_sim_capture_guard(int legacy, int unsafe)
{
	cudaError_t e = cudaSuccess;
	pthread_mutex_lock(&dc_sim_sg.mu);
	for (dc_sim_capture *c = dc_sim_sg.caps; c; c = c->next) {
		cudaError_t ce = cudaSuccess;
		if (unsafe && (c->mode == cudaStreamCaptureModeGlobal ||
		               (c->mode == cudaStreamCaptureModeThreadLocal && pthread_equal(c->thread, pthread_self()))))
			ce = cudaErrorStreamCaptureUnsupported;
		else if (legacy && c->blocking)
			ce = cudaErrorStreamCaptureImplicit;
		if (ce == cudaSuccess) continue;
		dc_sim_capture_break_locked(c, ce);
		if (e == cudaSuccess) e = ce;
	}
	pthread_mutex_unlock(&dc_sim_sg.mu);
	return dc_sim_err(e);
}

/* An operation issued on capturing stream s failed its checks: the capture
 * is invalidated, the operation returns e. */
static inline cudaError_t dc_sim_capture_fail(cudaStream_t s, cudaError_t e)
{
	pthread_mutex_lock(&dc_sim_sg.mu);
	dc_sim_capture *c = dc_sim_capture_find_locked(s);
	if (c) dc_sim_capture_break_locked(c, e);
	pthread_mutex_unlock(&dc_sim_sg.mu);
	return dc_sim_err(e);
}

/* Append op (whose reference it takes) to the graph stream s captures;
 * after an invalidation op is dropped and the call fails, as on CUDA. */
static inline cudaError_t dc_sim_capture_add(cudaStream_t s, dc_sim_op *op)
{
	cudaError_t e = cudaErrorStreamCaptureInvalidated;
	pthread_mutex_lock(&dc_sim_sg.mu);
	dc_sim_capture *c = dc_sim_capture_find_locked(s);
	if (!c) {
		e = cudaErrorIllegalState; /* the capture ended on another thread meanwhile */
	} else if (c->broken == cudaSuccess) {
		cudaGraph_t g = c->g;
		e = cudaSuccess;
		if (g->n == g->cap) {
			size_t cap = g->cap ? 2 * g->cap : 16;
			dc_sim_op **na = (dc_sim_op **)realloc(g->ops, cap * sizeof *na);
			if (na) {
				g->ops = na;
				g->cap = cap;
			} else {
				e = cudaErrorMemoryAllocation;
				dc_sim_capture_break_locked(c, e);
			}
		}
		if (e == cudaSuccess) g->ops[g->n++] = op;
	}
	pthread_mutex_unlock(&dc_sim_sg.mu);
	if (e != cudaSuccess) dc_sim_op_unref(op);
	return dc_sim_err(e);
}

static inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
	if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
	    mode != cudaStreamCaptureModeRelaxed)
		return dc_sim_err(cudaErrorInvalidValue);
	if (dc_sim_no_device()) return dc_sim_err(cudaErrorNoDevice);
	if (!s) return dc_sim_err(cudaErrorStreamCaptureUnsupported); /* the legacy stream */
	dc_sim_capture *c = (dc_sim_capture *)calloc(1, sizeof *c);
	cudaGraph_t g = (cudaGraph_t)calloc(1, sizeof *g);
	cudaError_t e = cudaSuccess;
	pthread_mutex_lock(&dc_sim_sg.mu);
	if (!dc_sim_stream_known_locked(s))
		e = cudaErrorInvalidResourceHandle; /* only streams made here can record */
	else if (dc_sim_capture_find_locked(s))
		e = cudaErrorIllegalState;
	else if (!c || !g)
		e = cudaErrorMemoryAllocation;
	if (e == cudaSuccess) {
		c->s = s;
		c->thread = pthread_self();
		c->mode = mode;
		c->blocking = !(s->flags & cudaStreamNonBlocking);
		c->broken = cudaSuccess;
		c->g = g;
		c->next = dc_sim_sg.caps;
		dc_sim_sg.caps = c;
	}
	pthread_mutex_unlock(&dc_sim_sg.mu);
	if (e != cudaSuccess) {
		free(c);
		free(g);
		return dc_sim_err(e);
	}
	dc_sim_trace("begin capture (%s mode, %s stream)",
	             mode == cudaStreamCaptureModeGlobal ? "global" : mode == cudaStreamCaptureModeThreadLocal ? "thread-local" : "relaxed",
	             c->blocking ? "blocking" : "non-blocking");
	return cudaSuccess;
}

static inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *pg)
{
	if (!pg) return dc_sim_err(cudaErrorInvalidValue);
	*pg = NULL;
	pthread_mutex_lock(&dc_sim_sg.mu);
	dc_sim_capture **pc = &dc_sim_sg.caps;
	while (*pc && (*pc)->s != s) pc = &(*pc)->next;
	dc_sim_capture *c = *pc;
	if (!c) {
		pthread_mutex_unlock(&dc_sim_sg.mu);
		return dc_sim_err(cudaErrorIllegalState);
	}
	if (c->mode != cudaStreamCaptureModeRelaxed && !pthread_equal(c->thread, pthread_self())) {
		pthread_mutex_unlock(&dc_sim_sg.mu);
		return dc_sim_err(cudaErrorStreamCaptureWrongThread);
	}
	*pc = c->next;
	pthread_mutex_unlock(&dc_sim_sg.mu);
	cudaError_t broken = c->broken;
	cudaGraph_t g = c->g;
	free(c);
	if (broken != cudaSuccess) {
		dc_sim_graph_free(g);
		dc_sim_trace("end capture: invalidated by %s", cudaGetErrorName(broken));
		return dc_sim_err(cudaErrorStreamCaptureInvalidated);
	}
	dc_sim_trace("end capture: %zu nodes", g->n);
	*pg = g;
	return cudaSuccess;
}

static inline cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
	if (!st) return dc_sim_err(cudaErrorInvalidValue);
	*st = cudaStreamCaptureStatusNone;
	if (!s) return dc_sim_capture_guard(1, 0);
	*st = dc_sim_capture_status(s);
	return cudaSuccess;
}

static inline cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	if (!s) return dc_sim_capture_guard(1, 0);
	if (dc_sim_capture_status(s) != cudaStreamCaptureStatusNone)
		return dc_sim_capture_fail(s, cudaErrorStreamCaptureUnsupported);
	return cudaSuccess;
}

static inline cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	if (!s) return dc_sim_err(cudaErrorInvalidValue);
	dc_sim_capture *c = NULL;
	pthread_mutex_lock(&dc_sim_sg.mu);
	size_t i = 0;
	while (i < dc_sim_sg.n && dc_sim_sg.s[i] != s) i++;
	if (i == dc_sim_sg.n) {
		pthread_mutex_unlock(&dc_sim_sg.mu);
		return dc_sim_err(cudaErrorInvalidResourceHandle);
	}
	dc_sim_sg.s[i] = dc_sim_sg.s[--dc_sim_sg.n];
	for (dc_sim_capture **pc = &dc_sim_sg.caps; *pc; pc = &(*pc)->next)
		if ((*pc)->s == s) {
			c = *pc;
			*pc = c->next;
			break;
		}
	pthread_mutex_unlock(&dc_sim_sg.mu);
	if (c) { /* a capture never ended: its graph goes with the stream */
		dc_sim_graph_free(c->g);
		free(c);
	}
	free(s);
	return cudaSuccess;
}

/* Events: with synchronous streams there is nothing to wait for, but they
 * take part in the capture rules (legacy-stream records and waits) and a
 * wait on an event recorded inside a capture, from a stream outside it, is
 * the fork of a cross-stream capture, which is refused. */
#define cudaEventDefault 0x00u
#define cudaEventBlockingSync 0x01u
#define cudaEventDisableTiming 0x02u

struct dc_sim_event {
	unsigned magic;
	unsigned flags;
	cudaStream_t captured; /* recorded last on this capturing stream, or NULL */
};
typedef struct dc_sim_event *cudaEvent_t;

static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *ev, unsigned flags)
{
	if (!ev || (flags & ~(cudaEventBlockingSync | cudaEventDisableTiming))) return dc_sim_err(cudaErrorInvalidValue);
	if (dc_sim_no_device()) return dc_sim_err(cudaErrorNoDevice);
	*ev = (cudaEvent_t)calloc(1, sizeof **ev);
	if (!*ev) return dc_sim_err(cudaErrorMemoryAllocation);
	(*ev)->magic = 0xe7e7u;
	(*ev)->flags = flags;
	return cudaSuccess;
}

static inline cudaError_t cudaEventCreate(cudaEvent_t *ev)
{
	return cudaEventCreateWithFlags(ev, cudaEventDefault);
}

static inline cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
	if (!ev || ev->magic != 0xe7e7u) return dc_sim_err(cudaErrorInvalidResourceHandle);
	ev->magic = 0;
	free(ev);
	return cudaSuccess;
}

static inline cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s = 0)
{
	if (!ev || ev->magic != 0xe7e7u) return dc_sim_err(cudaErrorInvalidResourceHandle);
	ev->captured = dc_sim_capture_status(s) != cudaStreamCaptureStatusNone ? s : NULL;
	return s ? cudaSuccess : dc_sim_capture_guard(1, 0);
}

static inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned flags = 0)
{
	if (!ev || ev->magic != 0xe7e7u) return dc_sim_err(cudaErrorInvalidResourceHandle);
	if (flags) return dc_sim_err(cudaErrorInvalidValue);
	if (ev->captured && ev->captured != s && dc_sim_capture_status(ev->captured) != cudaStreamCaptureStatusNone) {
		fputs("doccc simulation: a stream waits for an event recorded in another stream's capture "
		      "(cross-stream capture is not simulated)\n", stderr);
		return dc_sim_capture_fail(ev->captured, cudaErrorStreamCaptureUnsupported);
	}
	return s ? cudaSuccess : dc_sim_capture_guard(1, 0);
}

static inline cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
	if (!g) return dc_sim_err(cudaErrorInvalidValue);
	dc_sim_trace("graph destroy: %zu nodes", g->n);
	dc_sim_graph_free(g);
	return cudaSuccess;
}

static inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pe, cudaGraph_t g, unsigned long long flags = 0)
{
	if (!pe) return dc_sim_err(cudaErrorInvalidValue);
	*pe = NULL;
	if (!g || flags) return dc_sim_err(cudaErrorInvalidValue);
	cudaGraphExec_t x = (cudaGraphExec_t)calloc(1, sizeof *x);
	dc_sim_op **ops = (dc_sim_op **)malloc((g->n ? g->n : 1) * sizeof *ops);
	if (!x || !ops) {
		free(x);
		free(ops);
		return dc_sim_err(cudaErrorMemoryAllocation);
	}
	for (size_t i = 0; i < g->n; i++) {
		__atomic_add_fetch(&g->ops[i]->refs, 1, __ATOMIC_RELAXED);
		ops[i] = g->ops[i];
	}
	x->ops = ops;
	x->n = g->n;
	*pe = x;
	dc_sim_trace("instantiate: %zu nodes", x->n);
	return cudaSuccess;
}

static inline cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pe, cudaGraph_t g, unsigned long long flags = 0)
{
	return cudaGraphInstantiate(pe, g, flags);
}

/* The operations of g replace x's when both have the same operations of
 * the same kinds in the same order (what changes is their arguments). */
static inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g, cudaGraphExecUpdateResultInfo *info)
{
	if (!x || !g || !info) return dc_sim_err(cudaErrorInvalidValue);
	memset(info, 0, sizeof *info);
	if (x->n != g->n) info->result = cudaGraphExecUpdateErrorTopologyChanged;
	for (size_t i = 0; info->result == cudaGraphExecUpdateSuccess && i < g->n; i++)
		if (x->ops[i]->kind != g->ops[i]->kind) info->result = cudaGraphExecUpdateErrorFunctionChanged;
	if (info->result != cudaGraphExecUpdateSuccess) {
		dc_sim_trace("exec update refused: %s", info->result == cudaGraphExecUpdateErrorTopologyChanged ? "topology changed" : "function changed");
		return dc_sim_err(cudaErrorGraphExecUpdateFailure);
	}
	for (size_t i = 0; i < g->n; i++) {
		__atomic_add_fetch(&g->ops[i]->refs, 1, __ATOMIC_RELAXED);
		dc_sim_op_unref(x->ops[i]);
		x->ops[i] = g->ops[i];
	}
	dc_sim_trace("exec update: %zu nodes", g->n);
	return cudaSuccess;
}

static inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x)
{
	if (!x) return dc_sim_err(cudaErrorInvalidValue);
	dc_sim_trace("exec destroy: %zu nodes", x->n);
	for (size_t i = 0; i < x->n; i++) dc_sim_op_unref(x->ops[i]);
	free(x->ops);
	free(x);
	return cudaSuccess;
}

/* Runs x's operations in order on the calling thread; into a capturing
 * stream they are recorded instead (a child graph, flattened). */
static inline cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s)
{
	if (!x) return dc_sim_err(cudaErrorInvalidValue);
	if (dc_sim_no_device()) return dc_sim_err(cudaErrorNoDevice);
	if (dc_sim_capture_status(s) != cudaStreamCaptureStatusNone) {
		for (size_t i = 0; i < x->n; i++) {
			__atomic_add_fetch(&x->ops[i]->refs, 1, __ATOMIC_RELAXED);
			cudaError_t e = dc_sim_capture_add(s, x->ops[i]);
			if (e != cudaSuccess) return e;
		}
		dc_sim_trace("graph launch captured: %zu nodes", x->n);
		return cudaSuccess;
	}
	if (!s) {
		cudaError_t e = dc_sim_capture_guard(1, 0);
		if (e != cudaSuccess) return e;
	}
	dc_sim_trace("graph launch: %zu nodes", x->n);
	for (size_t i = 0; i < x->n; i++) {
		cudaError_t e = x->ops[i]->run(x->ops[i]);
		if (e != cudaSuccess) return dc_sim_err(e);
	}
	return cudaSuccess;
}

/* ---- memory ---- */

static inline cudaError_t cudaMalloc(void **p, size_t n)
{
	if (!p) return dc_sim_err(cudaErrorInvalidValue);
	*p = NULL;
	if (dc_sim_no_device()) return dc_sim_err(cudaErrorNoDevice);
	if (dc_sim_capture_guard(0, 1)) return cudaErrorStreamCaptureUnsupported;
	if (n == 0) return cudaSuccess;
	if (n > DC_SIM_SPAN / 2) return dc_sim_err(cudaErrorMemoryAllocation);
	size_t pg = dc_sim_page();
	size_t rounded = (n + 255) & ~(size_t)255;
	size_t maplen = (rounded + pg - 1) & ~(pg - 1);
	size_t step = maplen + pg; /* the page after stays unmapped */
	size_t skip = step > (1u << 20) ? step : (1u << 20);
	cudaError_t e = cudaErrorMemoryAllocation;
	pthread_mutex_lock(&dc_sim_g.mu);
	if (dc_sim_g.live + n > dc_sim_memory_cap() || dc_sim_g.live + n < n) goto out;
	if (dc_sim_g.n == dc_sim_g.cap) {
		size_t cap = dc_sim_g.cap ? 2 * dc_sim_g.cap : 64;
		dc_sim_alloc *na = (dc_sim_alloc *)realloc(dc_sim_g.a, cap * sizeof *na);
		if (!na) goto out;
		dc_sim_g.a = na;
		dc_sim_g.cap = cap;
	}
	for (int tries = 0, wrapped = 0; tries < 65536; tries++) {
		uintptr_t at = dc_sim_g.cursor ? dc_sim_g.cursor : (uintptr_t)DC_SIM_BASE;
		if (at + step > DC_SIM_BASE + DC_SIM_SPAN) {
			if (wrapped++) break;
			dc_sim_g.cursor = DC_SIM_BASE;
			continue;
		}
		void *m = mmap((void *)at, maplen, PROT_NONE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (m == MAP_FAILED) {
			if (errno != EEXIST) break;
			dc_sim_g.cursor = at + skip;
			continue;
		}
		if ((uintptr_t)m != at) {
			/* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
			munmap(m, maplen);
			dc_sim_g.cursor = at + skip;
			continue;
		}
		dc_sim_g.cursor = at + step;
		dc_sim_alloc *a = &dc_sim_g.a[dc_sim_g.n++];
		a->map = at;
		a->maplen = maplen;
		a->ptr = at + maplen - rounded;
		a->size = n;
		a->pins = 0;
		dc_sim_g.live += n;
		*p = (void *)a->ptr;
		e = cudaSuccess;
		break;
	}
out:
	pthread_mutex_unlock(&dc_sim_g.mu);
	return dc_sim_err(e);
}

template <class T>
static inline cudaError_t cudaMalloc(T **p, size_t n)
{
	return cudaMalloc((void **)p, n);
}

static inline cudaError_t cudaFree(void *p)
{
	if (!p) return cudaSuccess;
	if (dc_sim_capture_guard(0, 1)) return cudaErrorStreamCaptureUnsupported;
	pthread_mutex_lock(&dc_sim_g.mu);
	for (;;) {
		size_t i = 0;
		while (i < dc_sim_g.n && dc_sim_g.a[i].ptr != (uintptr_t)p) i++;
		if (i == dc_sim_g.n) {
			pthread_mutex_unlock(&dc_sim_g.mu);
			return dc_sim_err(cudaErrorInvalidDevicePointer);
		}
		if (dc_sim_g.a[i].pins) { /* a launch or copy on another thread */
			pthread_cond_wait(&dc_sim_g.unpinned, &dc_sim_g.mu);
			continue;
		}
		munmap((void *)dc_sim_g.a[i].map, dc_sim_g.a[i].maplen);
		dc_sim_g.live -= dc_sim_g.a[i].size;
		dc_sim_g.a[i] = dc_sim_g.a[--dc_sim_g.n];
		break;
	}
	pthread_mutex_unlock(&dc_sim_g.mu);
	return cudaSuccess;
}

static inline cudaError_t cudaMallocHost(void **p, size_t n)
{
	if (!p) return dc_sim_err(cudaErrorInvalidValue);
	*p = NULL;
	if (dc_sim_capture_guard(0, 1)) return cudaErrorStreamCaptureUnsupported;
	if (posix_memalign(p, 4096, n ? n : 1) != 0) {
		*p = NULL;
		return dc_sim_err(cudaErrorMemoryAllocation);
	}
	return cudaSuccess;
}

template <class T>
static inline cudaError_t cudaMallocHost(T **p, size_t n)
{
	return cudaMallocHost((void **)p, n);
}

static inline cudaError_t cudaFreeHost(void *p)
{
	if (p && dc_sim_capture_guard(0, 1)) return cudaErrorStreamCaptureUnsupported;
	free(p);
	return cudaSuccess;
}

/* A copy's checks and, if run, the copy itself. */
static inline cudaError_t dc_sim_copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind, int run)
{
	int dd = dc_sim_is_device_ptr(dst), sd = dc_sim_is_device_ptr(src);
	switch (kind) {
	case cudaMemcpyHostToHost: if (dd || sd) return dc_sim_err(cudaErrorInvalidValue); break;
	case cudaMemcpyHostToDevice: if (!dd || sd) return dc_sim_err(cudaErrorInvalidValue); break;
	case cudaMemcpyDeviceToHost: if (dd || !sd) return dc_sim_err(cudaErrorInvalidValue); break;
	case cudaMemcpyDeviceToDevice: if (!dd || !sd) return dc_sim_err(cudaErrorInvalidValue); break;
	case cudaMemcpyDefault: break;
	default: return dc_sim_err(cudaErrorInvalidMemcpyDirection);
	}
	if (n == 0) return cudaSuccess;
	if (!dst || !src) return dc_sim_err(cudaErrorInvalidValue);
	uintptr_t db = 0, sb = 0;
	if (dd && dc_sim_pin_range(dst, n, &db)) return dc_sim_err(cudaErrorInvalidValue);
	if (sd && dc_sim_pin_range(src, n, &sb)) {
		if (dd) dc_sim_unpin(db);
		return dc_sim_err(cudaErrorInvalidValue);
	}
	if (run) memmove(dst, src, n);
	if (sd) dc_sim_unpin(sb);
	if (dd) dc_sim_unpin(db);
	return cudaSuccess;
}

static inline cudaError_t dc_sim_set(void *p, int v, size_t n, int run)
{
	if (n == 0) return cudaSuccess;
	uintptr_t b = 0;
	if (!dc_sim_is_device_ptr(p) || dc_sim_pin_range(p, n, &b)) return dc_sim_err(cudaErrorInvalidValue);
	if (run) memset(p, v, n);
	dc_sim_unpin(b);
	return cudaSuccess;
}

/* A recorded cudaMemcpyAsync (v < 0) or cudaMemsetAsync (value v). */
typedef struct {
	dc_sim_op op;
	void *dst;
	const void *src;
	size_t n;
	cudaMemcpyKind kind;
	int v;
} dc_sim_mem_op;

static inline void dc_sim_copy_kind(void *) {}
static inline void dc_sim_set_kind(void *) {}

static inline cudaError_t dc_sim_mem_run(dc_sim_op *o)
{
	dc_sim_mem_op *m = (dc_sim_mem_op *)o;
	return m->v < 0 ? dc_sim_copy(m->dst, m->src, m->n, m->kind, 1) : dc_sim_set(m->dst, m->v, m->n, 1);
}

static inline void dc_sim_mem_drop(dc_sim_op *o)
{
	free(o);
}

/* An async copy or memset on stream s: checked, then run, or recorded if
 * s captures. */
static inline cudaError_t dc_sim_mem_async(cudaStream_t s, void *dst, const void *src, size_t n, cudaMemcpyKind kind, int v)
{
	if (dc_sim_capture_status(s) == cudaStreamCaptureStatusNone) {
		if (!s && dc_sim_capture_guard(1, 0)) return cudaErrorStreamCaptureImplicit;
		return v < 0 ? dc_sim_copy(dst, src, n, kind, 1) : dc_sim_set(dst, v, n, 1);
	}
	cudaError_t e = v < 0 ? dc_sim_copy(dst, src, n, kind, 0) : dc_sim_set(dst, v, n, 0);
	if (e != cudaSuccess) return dc_sim_capture_fail(s, e);
	dc_sim_mem_op *m = (dc_sim_mem_op *)calloc(1, sizeof *m);
	if (!m) return dc_sim_capture_fail(s, cudaErrorMemoryAllocation);
	m->op.refs = 1;
	m->op.kind = v < 0 ? dc_sim_copy_kind : dc_sim_set_kind;
	m->op.run = dc_sim_mem_run;
	m->op.drop = dc_sim_mem_drop;
	m->dst = dst;
	m->src = src;
	m->n = n;
	m->kind = kind;
	m->v = v;
	return dc_sim_capture_add(s, &m->op);
}

/* The synchronous forms: legacy-stream work and unsafe during a capture. */
static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
	cudaError_t e = dc_sim_capture_guard(1, 1);
	return e != cudaSuccess ? e : dc_sim_copy(dst, src, n, kind, 1);
}

static inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s = 0)
{
	return dc_sim_mem_async(s, dst, src, n, kind, -1);
}

static inline cudaError_t cudaMemset(void *p, int v, size_t n)
{
	cudaError_t e = dc_sim_capture_guard(1, 1);
	return e != cudaSuccess ? e : dc_sim_set(p, v & 0xff, n, 1);
}

static inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s = 0)
{
	return dc_sim_mem_async(s, p, NULL, n, cudaMemcpyDefault, v & 0xff);
}

static inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attr, const void *p)
{
	if (!attr) return dc_sim_err(cudaErrorInvalidValue);
	memset(attr, 0, sizeof *attr);
	attr->type = cudaMemoryTypeUnregistered;
	attr->device = -2;
	/* another library's copy of this header allocates in the same range */
	if (p && dc_sim_is_device_ptr(p)) {
		attr->type = cudaMemoryTypeDevice;
		attr->device = 0;
		attr->devicePointer = (void *)p;
	}
	return cudaSuccess;
}

/* ---- launches ---- */

enum { DC_SIM_RUN = 0, DC_SIM_WAIT = 1, DC_SIM_DONE = 2 };

/* On x86-64 (without ASan, whose fiber annotations want ucontext) fibers
 * switch with dc_sim_switch: six callee-saved registers pushed on the old
 * stack, the stack pointer swapped, popped from the new one. swapcontext
 * also saves the signal mask with a system call at every switch, which
 * made a barrier-heavy launch of a few thousand blocks take seconds. */
#if defined(__x86_64__) && !defined(DC_SIM_ASAN)
#define DC_SIM_FASTCTX 1
__attribute__((naked, noinline)) static void dc_sim_switch(void **from, void *to)
{
	__asm__ volatile("pushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n\t"
	                 "movq %rsp, (%rdi)\n\tmovq %rsi, %rsp\n\t"
	                 "popq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n\tret");
}
#endif

typedef struct {
	ucontext_t ctx;
	void *sp;       /* DC_SIM_FASTCTX: the fiber's saved stack pointer */
	void *stack;
	int state;
} dc_sim_fiber;

typedef struct {
	ucontext_t main;
	void *main_sp;  /* DC_SIM_FASTCTX: the launcher's saved stack pointer */
	dc_sim_fiber *f;
	unsigned n, cur;
	void (*fn)(void *);
	void *arg;
	void *main_fake;
	const void *main_bottom;
	size_t main_size;
} dc_sim_sched;

/* Non-null while this OS thread runs a DC_LAUNCH_SYNC block. */
static thread_local dc_sim_sched *dc_sim_cur_sched;

static inline void dc_sim_asan_start(void **fake, const void *bottom, size_t size)
{
#ifdef DC_SIM_ASAN
	__sanitizer_start_switch_fiber(fake, bottom, size);
#else
	(void)fake, (void)bottom, (void)size;
#endif
}

static inline void dc_sim_asan_finish(void *fake, const void **bottom, size_t *size)
{
#ifdef DC_SIM_ASAN
	__sanitizer_finish_switch_fiber(fake, bottom, size);
#else
	(void)fake, (void)bottom, (void)size;
#endif
}

static inline void __syncthreads(void)
{
	dc_sim_sched *s = dc_sim_cur_sched;
	if (!s) {
		fputs("doccc simulation: __syncthreads() in a kernel launched without DC_LAUNCH_SYNC\n", stderr);
		abort();
	}
	dc_sim_fiber *f = &s->f[s->cur];
	f->state = DC_SIM_WAIT;
#ifdef DC_SIM_FASTCTX
	dc_sim_switch(&f->sp, s->main_sp);
#else
	void *fake = NULL;
	dc_sim_asan_start(&fake, s->main_bottom, s->main_size);
	swapcontext(&f->ctx, &s->main);
	dc_sim_asan_finish(fake, &s->main_bottom, &s->main_size);
#endif
}

static inline void __threadfence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void __threadfence_block(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void dc_sim_fiber_main(void)
{
	dc_sim_sched *s = dc_sim_cur_sched;
	dc_sim_asan_finish(NULL, &s->main_bottom, &s->main_size);
	s->fn(s->arg);
	s = dc_sim_cur_sched;
	s->f[s->cur].state = DC_SIM_DONE;
#ifdef DC_SIM_FASTCTX
	dc_sim_switch(&s->f[s->cur].sp, s->main_sp);
#else
	dc_sim_asan_start(NULL, s->main_bottom, s->main_size);
	setcontext(&s->main);
#endif
	abort();
}

/* A stack of DC_SIM_STACK bytes with a PROT_NONE guard page below it. */
static inline void *dc_sim_stack_get(void)
{
	void *st = NULL;
	pthread_mutex_lock(&dc_sim_g.mu);
	if (dc_sim_g.nstacks) st = dc_sim_g.stacks[--dc_sim_g.nstacks];
	pthread_mutex_unlock(&dc_sim_g.mu);
	if (st) return st;
	size_t pg = dc_sim_page();
	void *m = mmap(NULL, DC_SIM_STACK + pg, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (m == MAP_FAILED) return NULL;
	mprotect(m, pg, PROT_NONE);
	return (char *)m + pg;
}

static inline void dc_sim_stack_put(void *st)
{
	pthread_mutex_lock(&dc_sim_g.mu);
	if (dc_sim_g.nstacks == dc_sim_g.capstacks) {
		size_t cap = dc_sim_g.capstacks ? 2 * dc_sim_g.capstacks : 64;
		void **ns = (void **)realloc(dc_sim_g.stacks, cap * sizeof *ns);
		if (!ns) {
			pthread_mutex_unlock(&dc_sim_g.mu);
			munmap((char *)st - dc_sim_page(), DC_SIM_STACK + dc_sim_page());
			return;
		}
		dc_sim_g.stacks = ns;
		dc_sim_g.capstacks = cap;
	}
	dc_sim_g.stacks[dc_sim_g.nstacks++] = st;
	pthread_mutex_unlock(&dc_sim_g.mu);
}

/* Out of line: getcontext returns twice, keep it away from loop variables. */
static __attribute__((noinline)) void dc_sim_fiber_init(dc_sim_fiber *f, ucontext_t *link)
{
#ifdef DC_SIM_FASTCTX
	/* a fresh stack that dc_sim_switch "returns" into dc_sim_fiber_main
	 * from, aligned as after a call (a zero return address above it) */
	(void)link;
	void **sp = (void **)((uintptr_t)((char *)f->stack + DC_SIM_STACK) & ~(uintptr_t)15);
	*--sp = NULL;
	*--sp = (void *)dc_sim_fiber_main;
	for (int i = 0; i < 6; i++)
		*--sp = NULL;
	f->sp = sp;
#else
#ifdef DC_SIM_ASAN
	__asan_unpoison_memory_region(f->stack, DC_SIM_STACK);
#endif
	getcontext(&f->ctx);
	f->ctx.uc_stack.ss_sp = f->stack;
	f->ctx.uc_stack.ss_size = DC_SIM_STACK;
	f->ctx.uc_link = link;
	makecontext(&f->ctx, dc_sim_fiber_main, 0);
#endif
	f->state = DC_SIM_RUN;
}

/* Run one block as fibers. */
static inline void dc_sim_run_block_sync(dc_sim_sched *s, dim3 b)
{
	for (unsigned i = 0; i < s->n; i++) dc_sim_fiber_init(&s->f[i], &s->main);
	for (;;) {
		int waiting = 0;
		for (unsigned i = 0; i < s->n; i++) {
			dc_sim_fiber *f = &s->f[i];
			if (f->state != DC_SIM_RUN) continue;
			threadIdx = uint3{i % b.x, i / b.x % b.y, i / (b.x * b.y)};
			s->cur = i;
			dc_sim_cur_sched = s;
#ifdef DC_SIM_FASTCTX
			dc_sim_switch(&s->main_sp, f->sp);
#else
			dc_sim_asan_start(&s->main_fake, f->stack, DC_SIM_STACK);
			swapcontext(&s->main, &f->ctx);
			dc_sim_asan_finish(s->main_fake, NULL, NULL);
#endif
			dc_sim_cur_sched = NULL;
			if (f->state == DC_SIM_WAIT) waiting++;
		}
		if (!waiting) break;
		for (unsigned i = 0; i < s->n; i++)
			if (s->f[i].state == DC_SIM_WAIT) s->f[i].state = DC_SIM_RUN;
	}
}

/* What a launch checks before it runs (or is recorded). */
static inline cudaError_t dc_sim_launch_check(dim3 g, dim3 b)
{
	unsigned long long nt = (unsigned long long)b.x * b.y * b.z;
	if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z || nt > DC_SIM_MAX_THREADS || b.z > 64 ||
	    g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535)
		return cudaErrorInvalidConfiguration;
	if (dc_sim_no_device()) return cudaErrorNoDevice;
	return cudaSuccess;
}

static inline cudaError_t dc_sim_launch_impl(dim3 g, dim3 b, int sync, void (*fn)(void *), void *arg)
{
	unsigned long long nt = (unsigned long long)b.x * b.y * b.z;
	cudaError_t bad = dc_sim_launch_check(g, b);
	if (bad != cudaSuccess) return dc_sim_err(bad);

	/* pin every live allocation of this registry */
	uintptr_t *pinned = NULL;
	size_t npinned = 0;
	pthread_mutex_lock(&dc_sim_g.mu);
	if (dc_sim_g.n) {
		pinned = (uintptr_t *)malloc(dc_sim_g.n * sizeof *pinned);
		if (!pinned) {
			pthread_mutex_unlock(&dc_sim_g.mu);
			return dc_sim_err(cudaErrorMemoryAllocation);
		}
		for (size_t i = 0; i < dc_sim_g.n; i++) {
			dc_sim_pin_locked(&dc_sim_g.a[i]);
			pinned[npinned++] = dc_sim_g.a[i].ptr;
		}
	}
	pthread_mutex_unlock(&dc_sim_g.mu);

	dc_sim_sched *s = NULL;
	if (sync) {
		s = (dc_sim_sched *)calloc(1, sizeof *s);
		if (s) s->f = (dc_sim_fiber *)calloc(nt, sizeof *s->f);
		if (s && s->f) {
			s->n = (unsigned)nt;
			s->fn = fn;
			s->arg = arg;
			for (unsigned i = 0; i < s->n; i++) {
				s->f[i].stack = dc_sim_stack_get();
				if (!s->f[i].stack) {
					fputs("doccc simulation: cannot map fiber stacks\n", stderr);
					abort();
				}
			}
		} else {
			fputs("doccc simulation: out of memory for fibers\n", stderr);
			abort();
		}
	}

	dc_sim_sched *saved = dc_sim_cur_sched;
	dc_sim_cur_sched = NULL;
	gridDim = g;
	blockDim = b;
	for (unsigned bz = 0; bz < g.z; bz++)
		for (unsigned by = 0; by < g.y; by++)
			for (unsigned bx = 0; bx < g.x; bx++) {
				blockIdx = uint3{bx, by, bz};
				if (sync) {
					dc_sim_run_block_sync(s, b);
					continue;
				}
				for (unsigned tz = 0; tz < b.z; tz++)
					for (unsigned ty = 0; ty < b.y; ty++)
						for (unsigned tx = 0; tx < b.x; tx++) {
							threadIdx = uint3{tx, ty, tz};
							fn(arg);
						}
			}
	dc_sim_cur_sched = saved;

	if (s) {
		for (unsigned i = 0; i < s->n; i++) dc_sim_stack_put(s->f[i].stack);
		free(s->f);
		free(s);
	}
	pthread_mutex_lock(&dc_sim_g.mu);
	for (size_t i = 0; i < npinned; i++) dc_sim_unpin_locked(pinned[i]);
	pthread_mutex_unlock(&dc_sim_g.mu);
	free(pinned);
	return cudaSuccess;
}

template <class F>
static inline void dc_sim_thunk(void *p)
{
	(*(F *)p)();
}

/* A launch recorded by a capture: its configuration and its lambda (the
 * kernel's arguments, by value). */
template <class F>
struct dc_sim_launch_op {
	dc_sim_op op;
	dim3 g, b;
	int sync;
	F f;
};

template <class F>
static inline cudaError_t dc_sim_launch_run(dc_sim_op *o)
{
	dc_sim_launch_op<F> *l = (dc_sim_launch_op<F> *)o;
	return dc_sim_launch_impl(l->g, l->b, l->sync, &dc_sim_thunk<F>, &l->f);
}

template <class F>
static inline void dc_sim_launch_drop(dc_sim_op *o)
{
	delete (dc_sim_launch_op<F> *)o;
}

template <class F>
static inline void dc_sim_launch(dim3 g, dim3 b, cudaStream_t s, int sync, void (*kernel)(void *), F f)
{
	if (dc_sim_capture_status(s) == cudaStreamCaptureStatusNone) {
		if (!s && dc_sim_capture_guard(1, 0)) return;
		dc_sim_launch_impl(g, b, sync, &dc_sim_thunk<F>, &f);
		return;
	}
	cudaError_t e = dc_sim_launch_check(g, b);
	if (e == cudaSuccess && dc_sim_env_on("DOCCC_SIM_CAPTURE_FAIL")) e = cudaErrorStreamCaptureUnsupported;
	if (e != cudaSuccess) {
		dc_sim_capture_fail(s, e);
		return;
	}
	dc_sim_launch_op<F> *l = new dc_sim_launch_op<F>{{1, kernel, &dc_sim_launch_run<F>, &dc_sim_launch_drop<F>}, g, b, sync, f};
	dc_sim_capture_add(s, &l->op);
}

#define DC_LAUNCH(kernel, grid, block, stream, ...) \
	dc_sim_launch(dim3(grid), dim3(block), (cudaStream_t)(stream), 0, reinterpret_cast<void (*)(void *)>(&kernel), \
	              [=]() { kernel(__VA_ARGS__); })
#define DC_LAUNCH_SYNC(kernel, grid, block, stream, ...) \
	dc_sim_launch(dim3(grid), dim3(block), (cudaStream_t)(stream), 1, reinterpret_cast<void (*)(void *)>(&kernel), \
	              [=]() { kernel(__VA_ARGS__); })

/* ---- atomics (real atomics: device memory may be shared across OS threads) ---- */

template <class T>
static inline T dc_sim_atomic_update(T *p, T v, int op)
{
	T old, nv;
	__atomic_load(p, &old, __ATOMIC_RELAXED);
	do {
		switch (op) {
		case 0: nv = old + v; break;
		case 1: nv = old > v ? old : v; break;
		default: nv = old < v ? old : v; break;
		}
	} while (!__atomic_compare_exchange(p, &old, &nv, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	return old;
}

static inline float atomicAdd(float *p, float v) { return dc_sim_atomic_update(p, v, 0); }
static inline double atomicAdd(double *p, double v) { return dc_sim_atomic_update(p, v, 0); }
static inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
	return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}

static inline int atomicMax(int *p, int v) { return dc_sim_atomic_update(p, v, 1); }
static inline unsigned atomicMax(unsigned *p, unsigned v) { return dc_sim_atomic_update(p, v, 1); }
static inline long long atomicMax(long long *p, long long v) { return dc_sim_atomic_update(p, v, 1); }
static inline int atomicMin(int *p, int v) { return dc_sim_atomic_update(p, v, 2); }
static inline unsigned atomicMin(unsigned *p, unsigned v) { return dc_sim_atomic_update(p, v, 2); }
static inline long long atomicMin(long long *p, long long v) { return dc_sim_atomic_update(p, v, 2); }

static inline int atomicExch(int *p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned atomicExch(unsigned *p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
static inline float atomicExch(float *p, float v)
{
	float old;
	__atomic_exchange(p, &v, &old, __ATOMIC_SEQ_CST);
	return old;
}

template <class T>
static inline T dc_sim_atomic_cas(T *p, T cmp, T v)
{
	__atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return cmp;
}

static inline int atomicCAS(int *p, int cmp, int v) { return dc_sim_atomic_cas(p, cmp, v); }
static inline unsigned atomicCAS(unsigned *p, unsigned cmp, unsigned v) { return dc_sim_atomic_cas(p, cmp, v); }
static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long cmp, unsigned long long v)
{
	return dc_sim_atomic_cas(p, cmp, v);
}

/* ---- fast-math intrinsics ----
 * glibc's <math.h> declares extern __expf, __logf, __sinf, __cosf and
 * __powf, and C23 libms declare rsqrt/rsqrtf, so those names are macros. */

static inline float dc_sim_expf(float x) { return expf(x); }
static inline float dc_sim_logf(float x) { return logf(x); }
static inline float dc_sim_sinf(float x) { return sinf(x); }
static inline float dc_sim_cosf(float x) { return cosf(x); }
static inline float dc_sim_powf(float x, float y) { return powf(x, y); }
static inline float dc_sim_rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double dc_sim_rsqrt(double x) { return 1.0 / sqrt(x); }
#define __expf(x) dc_sim_expf(x)
#define __logf(x) dc_sim_logf(x)
#define __sinf(x) dc_sim_sinf(x)
#define __cosf(x) dc_sim_cosf(x)
#define __powf(x, y) dc_sim_powf(x, y)
#define rsqrtf(x) dc_sim_rsqrtf(x)
#define rsqrt(x) dc_sim_rsqrt(x)

static inline float __fdividef(float a, float b) { return a / b; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __saturatef(float x)
{
	if (!(x > 0.0f)) return 0.0f; /* NaN too */
	return x < 1.0f ? x : 1.0f;
}

/* ---- tensor cores: the subset of CUDA's wmma (<mma.h>) doccc emits ----
 * __half and __nv_bfloat16 are their 16 bits, made from bits with
 * __ushort_as_half / __ushort_as_bfloat16 (the generated code rounds with
 * its own dc_f2h, dc_f2b and dc_tf32, so the device and the simulation round
 * alike). A fragment holds its whole tile, row by row, not a lane's share:
 * load_matrix_sync, mma_sync and store_matrix_sync are warp-collective, so
 * lane 0 of each warp does the warp's work and the other lanes' fragments
 * stay unused (every lane of a warp calls them, as CUDA requires). mma_sync
 * multiplies the inputs exactly (a tf32, bf16 or fp16 product fits a
 * float) and adds in fp32, in k order, from the accumulator: the hardware's
 * order and rounding of that sum within one mma may differ in the last
 * bits. int8 fragments with int32 accumulators are exact, as on the
 * hardware. */

struct __half {
	uint16_t bits;
};
struct __nv_bfloat16 {
	uint16_t bits;
};
static inline __half __ushort_as_half(unsigned short b) { return __half{b}; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short b) { return __nv_bfloat16{b}; }

static inline float dc_sim_to_float(float x) { return x; }
static inline float dc_sim_to_float(__nv_bfloat16 x)
{
	uint32_t u = (uint32_t)x.bits << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static inline float dc_sim_to_float(__half x)
{
	uint32_t s = (uint32_t)(x.bits & 0x8000u) << 16, e = (x.bits >> 10) & 31u, m = x.bits & 0x3ffu, u;
	if (e == 31)
		u = s | 0x7f800000u | (m << 13);
	else if (e)
		u = s | ((e + 112u) << 23) | (m << 13);
	else {
		float f = ldexpf((float)m, -24); /* subnormal or zero: exact */
		return s ? -f : f;
	}
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* An operand as the accumulator type takes it. */
static inline int dc_sim_in(signed char x) { return x; }
template <class T> static inline float dc_sim_in(T x) { return dc_sim_to_float(x); }

namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
}
enum layout_t { mem_row_major, mem_col_major };

template <class L> struct dc_sim_col { enum { yes = 0 }; };
template <> struct dc_sim_col<col_major> { enum { yes = 1 }; };
template <class T> struct dc_sim_elem { typedef T type; };
template <> struct dc_sim_elem<precision::tf32> { typedef float type; };
template <class Use, int M, int N, int K> struct dc_sim_shape;
template <int M, int N, int K> struct dc_sim_shape<matrix_a, M, N, K> { enum { rows = M, cols = K }; };
template <int M, int N, int K> struct dc_sim_shape<matrix_b, M, N, K> { enum { rows = K, cols = N }; };
template <int M, int N, int K> struct dc_sim_shape<accumulator, M, N, K> { enum { rows = M, cols = N }; };

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
	typedef typename dc_sim_elem<T>::type element_type;
	enum { rows = dc_sim_shape<Use, M, N, K>::rows, cols = dc_sim_shape<Use, M, N, K>::cols };
	element_type x[rows * cols];
};

static inline int dc_sim_lane0(void)
{
	return ((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x) % 32 == 0;
}

template <class Use, int M, int N, int K, class T, class L, class P>
static inline void load_matrix_sync(fragment<Use, M, N, K, T, L> &f, const P *p, unsigned ldm)
{
	typedef fragment<Use, M, N, K, T, L> F;
	if (!dc_sim_lane0())
		return;
	int col = dc_sim_col<L>::yes;
	for (int r = 0; r < F::rows; r++)
		for (int c = 0; c < F::cols; c++)
			f.x[r * F::cols + c] = col ? p[(size_t)c * ldm + r] : p[(size_t)r * ldm + c];
}

template <int M, int N, int K, class T>
static inline void fill_fragment(fragment<accumulator, M, N, K, T> &f, T v)
{
	for (int i = 0; i < M * N; i++)
		f.x[i] = v;
}

template <int M, int N, int K, class T, class LA, class LB, class S>
static inline void mma_sync(fragment<accumulator, M, N, K, S> &d, const fragment<matrix_a, M, N, K, T, LA> &a,
                            const fragment<matrix_b, M, N, K, T, LB> &b, const fragment<accumulator, M, N, K, S> &c)
{
	if (!dc_sim_lane0())
		return;
	S out[M * N];
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			S acc = c.x[i * N + j];
			for (int k = 0; k < K; k++)
				acc += dc_sim_in(a.x[i * K + k]) * dc_sim_in(b.x[k * N + j]);
			out[i * N + j] = acc;
		}
	memcpy(d.x, out, sizeof out);
}

template <int M, int N, int K, class S>
static inline void store_matrix_sync(S *p, const fragment<accumulator, M, N, K, S> &f, unsigned ldm, layout_t l)
{
	if (!dc_sim_lane0())
		return;
	for (int r = 0; r < M; r++)
		for (int c = 0; c < N; c++)
			p[l == mem_col_major ? (size_t)c * ldm + r : (size_t)r * ldm + c] = f.x[r * N + c];
}
} /* namespace wmma */
} /* namespace nvcuda */

#endif
