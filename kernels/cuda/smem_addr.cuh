// smem_addr.cuh: the 32-bit shared-memory address of a generic pointer, the operand form of
// every PTX instruction that names shared memory (cp.async, ldmatrix, mbarrier, TMA, wgmma
// descriptors). Shared by the sm_80 and sm_90 building blocks (kernels/attention/fused/, kernels/gemm/).
#pragma once
#include <stdint.h>

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
