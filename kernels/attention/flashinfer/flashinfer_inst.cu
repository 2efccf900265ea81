// One instantiation of FlashInfer's sm_90 single prefill, as
// csrc/single_prefill_sm90_kernel_inst.jinja renders one per mask mode:
// SinglePrefillWithKVCacheDispatched<D, D, mask, /*USE_SLIDING_WINDOW=*/false,
// DefaultAttention<softcap>, Params<T>>. flashinfer.cmake compiles this file once per head dim,
// element type, mask and soft-cap through a generated wrapper that defines the four macros
// below (the defaults: head dim 128, fp16, causal, no soft-cap).
#include "flashinfer_params.cuh"

#include <flashinfer/attention/hopper/prefill_sm90.cuh>

#ifndef REPRO_FI_HEAD_DIM
#define REPRO_FI_HEAD_DIM 128
#endif
#ifndef REPRO_FI_DTYPE
#define REPRO_FI_DTYPE half
#endif
#ifndef REPRO_FI_MASK
#define REPRO_FI_MASK kCausal
#endif
#ifndef REPRO_FI_SOFTCAP
#define REPRO_FI_SOFTCAP false
#endif

namespace flashinfer {

template cudaError_t
SinglePrefillWithKVCacheDispatched<REPRO_FI_HEAD_DIM, REPRO_FI_HEAD_DIM, MaskMode::REPRO_FI_MASK,
                                   /*USE_SLIDING_WINDOW=*/false, DefaultAttention<REPRO_FI_SOFTCAP>,
                                   repro_flashinfer::Params<REPRO_FI_DTYPE>>(
    repro_flashinfer::Params<REPRO_FI_DTYPE> &params, cudaStream_t stream);

} // namespace flashinfer
