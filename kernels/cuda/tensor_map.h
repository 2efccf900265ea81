/* tensor_map.h: the driver's cuTensorMapEncodeTiled, which builds the TMA descriptors
 * (CUtensorMap) that Hopper kernels load tiles with (kernels/attention/fused/ and kernels/gemm/). It
 * is a driver API entry point; we look it up through the runtime
 * (cudaGetDriverEntryPointByVersion), so nothing links libcuda directly. CUDA only. */
#ifndef TENSOR_MAP_H
#define TENSOR_MAP_H

#include <cuda.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef CUresult (*tmap_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                         const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                         const cuuint32_t *, CUtensorMapInterleave,
                                         CUtensorMapSwizzle, CUtensorMapL2promotion,
                                         CUtensorMapFloatOOBfill);

/* The entry point (looked up once, then cached), or NULL with the reason in why. */
tmap_encode_tiled_fn tmap_encoder(char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
