// FlashInfer's single-request prefill on sm_90 as its JIT instantiates it for
// single_prefill_with_kv_cache(q, k, v, causal, sm_scale, logits_soft_cap) with backend "fa3"
// (what "auto" picks on an H100/H200 for fp16/bf16 at head dims 64, 128, 256):
// csrc/single_prefill_sm90_customize_config.jinja rendered for dtype_q = dtype_kv = dtype_o
// (one element type), head_dim_qk = head_dim_vo, no sliding window, and the non-FP8 fa3
// additional params (maybe_scale_v; logits_soft_cap, sm_scale, scale_v_scalar), here a template
// over the element type so one binary holds fp16 and bf16. Shared by flashinfer_launch.cu (the
// call) and flashinfer_inst.cu (one explicit instantiation per file, as the JIT writes one file
// per mask mode). Built with FlashInfer's flags (flashinfer.cmake), never with the kit's.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <flashinfer/attention/hopper/attention_updater.cuh>
#include <flashinfer/attention/hopper/variant_helper.cuh>
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/cutlass_utils.cuh>
#include <flashinfer/layout.cuh>
#include <flashinfer/math.cuh>
#include <flashinfer/pos_enc.cuh>
#include <flashinfer/utils.cuh>

namespace repro_flashinfer {

// The jinja's `struct Params`, its fields in its order; T is half or nv_bfloat16.
template <typename T> struct Params {
  using DTypeQ = flashinfer::cutlass_dtype_t<T>;
  using DTypeKV = flashinfer::cutlass_dtype_t<T>;
  using DTypeO = flashinfer::cutlass_dtype_t<T>;
  using IdType = flashinfer::cutlass_dtype_t<int32_t>;

  // The QKV matrices.
  DTypeQ *q_ptr;
  DTypeKV *k_ptr;
  DTypeKV *v_ptr;
  DTypeO *o_ptr;
  float *lse_ptr;

  // generate_additional_params(is_sm90_template=True) for gen_single_prefill_module("fa3", ...)
  // without FP8: the tensors, then the scalars.
  struct AdditionalParams {
    float *maybe_scale_v;
    double logits_soft_cap;
    double sm_scale;
    double scale_v_scalar;
  } additional_params;

  int64_t q_stride_n;
  int64_t k_stride_n;
  int64_t v_stride_n;
  int64_t o_stride_n;
  int64_t q_stride_h;
  int64_t k_stride_h;
  int64_t v_stride_h;
  int64_t o_stride_h;

  int qo_len;
  int kv_len;
  int head_dim;
  int num_qo_heads;
  int num_kv_heads;
  int group_size;
  int window_left;

  bool causal;
};

} // namespace repro_flashinfer

// {{ variant_decl }}: DefaultAttention<use_logits_soft_cap> (StandardAttention or LogitsSoftCap)
#include <flashinfer/attention/hopper/variants.cuh>

namespace flashinfer {

// Declared as csrc/single_prefill_sm90.cu declares it; flashinfer_inst.cu instantiates it.
template <uint32_t HEAD_DIM_QK, uint32_t HEAD_DIM_VO, MaskMode MASK_MODE, bool LEFT_SLINDING_WINDOW,
          typename AttentionVariant, typename Params>
cudaError_t SinglePrefillWithKVCacheDispatched(Params &params, cudaStream_t stream);

} // namespace flashinfer
