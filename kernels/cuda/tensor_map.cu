// tensor_map.cu: the cuTensorMapEncodeTiled lookup (tensor_map.h).
#include "tensor_map.h"

#include <cuda_runtime.h>
#include <stdio.h>

extern "C" tmap_encode_tiled_fn tmap_encoder(char *why, size_t why_len) {
  static tmap_encode_tiled_fn encode = nullptr;
  if (encode) return encode;
  cudaDriverEntryPointQueryResult found;
  void *fn = nullptr;
  cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                     cudaEnableDefault, &found);
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn) {
    snprintf(why, why_len, "the driver has no cuTensorMapEncodeTiled (%s)",
             cudaGetErrorString(err));
    return nullptr;
  }
  encode = reinterpret_cast<tmap_encode_tiled_fn>(fn);
  return encode;
}
