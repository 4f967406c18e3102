/*
 * gpu_rt.h - written as doccc_gpu.h beside every generated NAME.cu: one
 * device source for CUDA, HIP and the simulation, ggml style.
 *
 * The generated code is written in CUDA's spelling (cudaMalloc,
 * cudaStream_t, __global__, threadIdx) and launches every kernel through
 * DC_LAUNCH(kernel, grid, block, stream, args...), or DC_LAUNCH_SYNC for
 * kernels whose threads meet at __syncthreads() (the simulation runs those
 * as fibers; on a GPU the two are the same). This header maps that
 * onto one of three runtimes:
 *
 *   nvcc            <cuda_runtime.h>, DC_LAUNCH is kernel<<<grid, block, 0, stream>>>
 *   hipcc           <hip/hip_runtime.h>, the cuda* names #defined to hip*
 *   -DDOCCC_SIM     gpu_sim.h: the same source compiled for the host, every
 *                   block's threads run by a launch loop, "device" memory
 *                   inaccessible to host code outside copies
 *
 * A source with tensor-core contractions defines DC_WMMA first: nvcc then
 * gets <mma.h> and the 16-bit float types (the simulation has its own
 * wmma; HIP has none, and doccc emits none for rocm).
 *
 * It also gives the device code C's spelling of what it shares with the
 * CPU printer (restrict, _Bool), dc_is_device(p), the pointer query
 * NAME_run uses to reject host memory (cudaPointerGetAttributes;
 * hipPointerGetAttributes; the simulation's address range), and
 * dc_graph_update(exec, graph), cudaGraphExecUpdate without its result
 * details, whose signature differs between CUDA 11, CUDA 12 and HIP. The
 * graph calls are those of HIP 5.2 (hipGraphInstantiateWithFlags: its
 * hipGraphInstantiate has CUDA 11's five parameters).
 */
#ifndef DOCCC_GPU_H
#define DOCCC_GPU_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(DOCCC_SIM)
#include "gpu_sim.h"
#define DC_RUNTIME "simulated"
static inline int dc_is_device(const void *p)
{
	return dc_sim_is_device_ptr(p);
}
static inline cudaError_t dc_graph_update(cudaGraphExec_t x, cudaGraph_t g)
{
	cudaGraphExecUpdateResultInfo info;
	return cudaGraphExecUpdate(x, g, &info);
}
#elif defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define DC_RUNTIME "HIP"
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaStream_t hipStream_t
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetLastError hipGetLastError
#define cudaGetErrorString hipGetErrorString
#define cudaGetErrorName hipGetErrorName
#define cudaMallocHost(p, n) hipHostMalloc((p), (n), hipHostMallocDefault)
#define cudaFreeHost hipHostFree
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamDestroy hipStreamDestroy
#define cudaEvent_t hipEvent_t
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaEventRecord hipEventRecord
#define cudaEventDestroy hipEventDestroy
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaGraph_t hipGraph_t
#define cudaGraphExec_t hipGraphExec_t
#define cudaStreamCaptureStatus hipStreamCaptureStatus
#define cudaStreamCaptureStatusNone hipStreamCaptureStatusNone
#define cudaStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaStreamIsCapturing hipStreamIsCapturing
#define cudaGraphInstantiateWithFlags hipGraphInstantiateWithFlags
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraphExecDestroy hipGraphExecDestroy
#define cudaGraphDestroy hipGraphDestroy
#define DC_LAUNCH(k, g, b, s, ...) hipLaunchKernelGGL(k, g, b, 0, s, __VA_ARGS__)
#define DC_LAUNCH_SYNC DC_LAUNCH
static inline int dc_is_device(const void *p)
{
	hipPointerAttribute_t a;
	if (hipPointerGetAttributes(&a, p) != hipSuccess) {
		(void)hipGetLastError(); /* host memory the runtime does not know: not an error of the run */
		return 0;
	}
	return a.memoryType == hipMemoryTypeDevice || a.isManaged;
}
static inline hipError_t dc_graph_update(hipGraphExec_t x, hipGraph_t g)
{
	hipGraphNode_t node;
	hipGraphExecUpdateResult r;
	return hipGraphExecUpdate(x, g, &node, &r);
}
#else
#include <cuda_runtime.h>
#ifdef DC_WMMA /* the source has tensor-core contractions */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#endif
#define DC_RUNTIME "CUDA"
#define DC_LAUNCH(k, g, b, s, ...) k<<<(g), (b), 0, (s)>>>(__VA_ARGS__)
#define DC_LAUNCH_SYNC DC_LAUNCH
static inline int dc_is_device(const void *p)
{
	cudaPointerAttributes a;
	if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
		(void)cudaGetLastError();
		return 0;
	}
	return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}
static inline cudaError_t dc_graph_update(cudaGraphExec_t x, cudaGraph_t g)
{
#if CUDART_VERSION >= 12000
	cudaGraphExecUpdateResultInfo info;
	return cudaGraphExecUpdate(x, g, &info);
#else
	cudaGraphNode_t node;
	cudaGraphExecUpdateResult r;
	return cudaGraphExecUpdate(x, g, &node, &r);
#endif
}
#endif

/* C spellings of the shared walker's output, in C++ device code. */
#define restrict __restrict__
#define _Bool bool

#endif
