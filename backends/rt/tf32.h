/*
 * tf32.h - float to tf32 as cvt.rna.tf32.f32 does it: to nearest, ties away
 * from zero, in the 13 low bits; inf and NaN as they are. Printed into a
 * CUDA source whose tiles run on tf32 tensor cores (backends/emit_gpu.c).
 *
 * The opening comment is for this file's reader: the library gets what
 * follows it (rt_body).
 */
static __device__ inline float dc_tf32(float f) { uint32_t u; memcpy(&u, &f, 4); if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u; memcpy(&f, &u, 4); return f; }
