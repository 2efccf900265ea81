// FlashInfer's single-request prefill (flashinfer-ai/flashinfer, include/flashinfer/) called as
// its own csrc/single_prefill_sm90.cu calls it for
// flashinfer.single_prefill_with_kv_cache(q, k, v, causal=..., sm_scale=..., logits_soft_cap=...)
// with backend "auto" on an H100/H200 (determine_attention_backend: "fa3" for fp16/bf16 without
// custom mask, RoPE/ALiBi or fp16 QK reduction, at head dims 64, 128, 256, all three built here):
// Params filled as single_prefill_with_kv_cache_sm90 fills them for contiguous NHD tensors
// q [S, H, D], k, v [S, Hkv, D] (GQA: group_size = H / Hkv query heads per K/V head), no LSE
// (return_lse=False), no sliding window (window_left=-1), no V scale, then
// SinglePrefillWithKVCacheDispatched<D, D, mask, false, DefaultAttention<softcap>> (one
// instantiation per file: flashinfer_inst.cu). The single-request API takes one sequence: a
// batch runs as one call per sequence, in order, on the stream. Built with FlashInfer's flags
// (kernels/attention/flashinfer/flashinfer.cmake), never with the kit's.
#include "flashinfer_call.h"
#include "flashinfer_params.cuh"

#include <cstdio>
#include <exception>

#ifndef REPRO_FLASHINFER_SOURCE
#define REPRO_FLASHINFER_SOURCE "unknown"
#endif

namespace {

using repro_flashinfer::Params;

// One request (sequence b of the batch), as single_prefill_with_kv_cache_sm90 fills Params.
template <typename T> void fill_params(Params<T> &p, const flashinfer_call *c, int b) {
  p = Params<T>{};
  const int64_t d = c->dim;
  const int64_t q_off = (int64_t)b * c->q_len * c->heads * d;
  const int64_t kv_off = (int64_t)b * c->kv_len * c->kv_heads * d;
  using DT = typename Params<T>::DTypeQ;
  p.q_ptr = const_cast<DT *>(static_cast<const DT *>(c->q)) + q_off;
  p.k_ptr = const_cast<DT *>(static_cast<const DT *>(c->k)) + kv_off;
  p.v_ptr = const_cast<DT *>(static_cast<const DT *>(c->v)) + kv_off;
  p.o_ptr = static_cast<DT *>(c->out) + q_off;
  p.lse_ptr = nullptr; // return_lse=False
  // NHD: q.stride(0), q.stride(1) of a contiguous [S, H, D] tensor
  p.q_stride_n = p.o_stride_n = (int64_t)c->heads * d;
  p.q_stride_h = p.o_stride_h = d;
  p.k_stride_n = p.v_stride_n = (int64_t)c->kv_heads * d;
  p.k_stride_h = p.v_stride_h = d;
  p.qo_len = c->q_len;
  p.kv_len = c->kv_len;
  p.head_dim = c->dim; // the JIT's binding leaves it unset: no kernel reads it
  p.num_qo_heads = c->heads;
  p.num_kv_heads = c->kv_heads;
  p.causal = c->causal != 0;
  p.group_size = c->heads / c->kv_heads;
  p.window_left = -1;
  // The fa3 module's additional params: no per-head V scale (scale_v None: nullptr and 1.0),
  // logits_soft_cap 0 when not given (then DefaultAttention<false> never reads it).
  p.additional_params.maybe_scale_v = nullptr;
  p.additional_params.logits_soft_cap = c->softcap;
  p.additional_params.sm_scale = c->scale;
  p.additional_params.scale_v_scalar = 1.0;
}

template <typename T, uint32_t D, flashinfer::MaskMode MASK, bool SOFTCAP>
cudaError_t run(const flashinfer_call *c, cudaStream_t s) {
  for (int b = 0; b < c->batch; b++) {
    Params<T> p;
    fill_params(p, c, b);
    const cudaError_t e =
        flashinfer::SinglePrefillWithKVCacheDispatched<D, D, MASK, /*USE_SLIDING_WINDOW=*/false,
                                                       flashinfer::DefaultAttention<SOFTCAP>>(p, s);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

template <typename T, uint32_t D> cudaError_t run_mask(const flashinfer_call *c, cudaStream_t s) {
  using flashinfer::MaskMode;
  if (c->causal)
    return c->softcap > 0 ? run<T, D, MaskMode::kCausal, true>(c, s)
                          : run<T, D, MaskMode::kCausal, false>(c, s);
  return c->softcap > 0 ? run<T, D, MaskMode::kNone, true>(c, s)
                        : run<T, D, MaskMode::kNone, false>(c, s);
}

template <typename T> cudaError_t run_dim(const flashinfer_call *c, cudaStream_t s) {
  switch (c->dim) {
  case 64: return run_mask<T, 64>(c, s);
  case 128: return run_mask<T, 128>(c, s);
  default: return run_mask<T, 256>(c, s);
  }
}

} // namespace

extern "C" int flashinfer_forward(const flashinfer_call *call, void *stream, char *err,
                                  size_t err_len) {
  if ((call->dim != 64 && call->dim != 128 && call->dim != 256) || call->kv_heads < 1 ||
      call->heads % call->kv_heads != 0) {
    std::snprintf(err, err_len,
                  "flashinfer: head dim %d with %d query and %d K/V heads is not instantiated",
                  call->dim, call->heads, call->kv_heads);
    return -1;
  }
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  try {
    const cudaError_t e = call->bf16 ? run_dim<nv_bfloat16>(call, s) : run_dim<half>(call, s);
    if (e != cudaSuccess) {
      std::snprintf(err, err_len, "flashinfer: SinglePrefillWithKVCacheDispatched: %s",
                    cudaGetErrorString(e));
      return -1;
    }
  } catch (const std::exception &e) {
    std::snprintf(err, err_len, "flashinfer: %s", e.what());
    return -1;
  }
  return 0;
}

extern "C" const char *flashinfer_source(void) { return REPRO_FLASHINFER_SOURCE; }
