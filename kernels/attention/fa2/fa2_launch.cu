// FlashAttention-2's forward (Dao-AILab/flash-attention, csrc/flash_attn/) called as its own
// flash_api.cpp calls it for flash_attn_func(q, k, v, softmax_scale, causal, softcap=...):
// Flash_fwd_params filled as set_params_fprop fills them for contiguous [B, S, H, D] tensors
// without dropout, window, ALiBi, varlen, paging or split-KV, then run_mha_fwd_<T, D, causal>
// for the head dims fa2.cmake instantiates: 64, 96, 128, 256, D equal to one of them (the build's
// FLASHATTENTION_DISABLE_UNEVEN_K makes every kernel assume D == its head dim). GQA as
// flash_attn_func runs it: K/V [B, S, Hkv, D] read in place, query head h on K/V head
// h / (H / Hkv) (h_h_k_ratio). Built with FlashAttention-2's flags
// (kernels/attention/fa2/fa2.cmake), never with the kit's.
#include "fa2_call.h"

#include <c10/cuda/CUDAException.h>
#include <cutlass/numeric_types.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "flash.h"

#ifndef REPRO_FA2_SOURCE
#define REPRO_FA2_SOURCE "unknown"
#endif

namespace {

int round_multiple(int x, int m) { return (x + m - 1) / m * m; }

void fill_params(FLASH_NAMESPACE::Flash_fwd_params &p, const fa2_call *call) {
  const peer_problem *c = &call->p;
  std::memset(&p, 0, sizeof p);
  const int64_t d = c->dim;
  p.q_ptr = const_cast<void *>(c->q);
  p.k_ptr = const_cast<void *>(c->k);
  p.v_ptr = const_cast<void *>(c->v);
  p.o_ptr = c->out;
  p.q_row_stride = (int64_t)c->heads * d;
  p.k_row_stride = p.v_row_stride = (int64_t)c->kv_heads * d;
  p.o_row_stride = p.q_row_stride;
  p.q_head_stride = p.k_head_stride = p.v_head_stride = p.o_head_stride = d;
  p.q_batch_stride = p.q_row_stride * c->q_len;
  p.k_batch_stride = p.v_batch_stride = p.k_row_stride * c->kv_len;
  p.o_batch_stride = p.q_batch_stride;
  p.softmax_lse_ptr = call->lse;
  p.b = c->batch;
  p.h = c->heads;
  p.h_k = c->kv_heads;
  p.h_h_k_ratio = c->heads / c->kv_heads;
  p.seqlen_q = c->q_len;
  p.seqlen_k = c->kv_len;
  p.seqlen_q_rounded = round_multiple(c->q_len, 128);
  p.seqlen_k_rounded = round_multiple(c->kv_len, 128);
  p.d = c->dim;
  p.d_rounded = c->dim <= 192 ? round_multiple(c->dim, 32) : 256;
  if (c->softcap > 0.f) { // set_params_fprop: tanh(s * scale / cap) * cap
    p.softcap = (float)(c->scale / c->softcap);
    p.scale_softmax = (float)c->softcap;
  } else {
    p.softcap = 0.f;
    p.scale_softmax = (float)c->scale;
  }
  p.scale_softmax_log2 = p.scale_softmax * (float)M_LOG2E;
  p.p_dropout = 1.f; // the probability of keeping: no dropout
  p.p_dropout_in_uint8_t = 255;
  p.rp_dropout = 1.f;
  p.scale_softmax_rp_dropout = p.scale_softmax;
  p.is_causal = c->causal != 0;
  p.window_size_left = -1;
  p.window_size_right = c->causal ? 0 : -1;
  p.is_bf16 = c->bf16 != 0;
  p.is_seqlens_k_cumulative = true;
  p.num_splits = 1;
}

template <typename T, int D> void launch(FLASH_NAMESPACE::Flash_fwd_params &p, cudaStream_t s) {
  if (p.is_causal)
    FLASH_NAMESPACE::run_mha_fwd_<T, D, true>(p, s);
  else
    FLASH_NAMESPACE::run_mha_fwd_<T, D, false>(p, s);
}

// HEADDIM_SWITCH's pick (static_switch.h) where it is one of the built head dims; fa2_forward
// has checked that D is exactly one.
template <typename T> void launch_dim(FLASH_NAMESPACE::Flash_fwd_params &p, cudaStream_t s) {
  switch (p.d) {
  case 64: launch<T, 64>(p, s); break;
  case 96: launch<T, 96>(p, s); break;
  case 128: launch<T, 128>(p, s); break;
  default: launch<T, 256>(p, s); break;
  }
}

} // namespace

extern "C" int fa2_forward(const fa2_call *call, void *stream, char *err, size_t err_len) {
  const peer_problem *c = &call->p;
  if ((c->dim != 64 && c->dim != 96 && c->dim != 128 && c->dim != 256) || c->kv_heads < 1 ||
      c->heads % c->kv_heads != 0) {
    std::snprintf(err, err_len, "fa2: head dim %d with %d query and %d K/V heads is not built",
                  c->dim, c->heads, c->kv_heads);
    return -1;
  }
  FLASH_NAMESPACE::Flash_fwd_params params;
  fill_params(params, call);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  try {
    if (call->p.bf16)
      launch_dim<cutlass::bfloat16_t>(params, s);
    else
      launch_dim<cutlass::half_t>(params, s);
  } catch (const std::exception &e) {
    std::snprintf(err, err_len, "fa2: %s", e.what());
    return -1;
  }
  return 0;
}

extern "C" const char *fa2_source(void) { return REPRO_FA2_SOURCE; }
