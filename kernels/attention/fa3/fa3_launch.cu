// fa3_launch.cu: FlashAttention-3's forward behind fa3_call.h. Built only when CMake is given
// FlashAttention-3's source (-DREPRO_FA3_DIR, kernels/attention/fa3/README.md), with its flags
// and beside its hopper/instantiations/flash_fwd_hdim{64,96,128,256}_{fp16,bf16}[_softcap]_sm90.cu.
//
// Flash_fwd_params is filled as flash-attention's hopper/flash_api.cpp (mha_fwd and
// set_params_fprop) fills it for flash_attn_func(q, k, v, causal=..., softcap=...) with its
// other defaults: no varlen, no paged or appended KV, no local window, one split, no GQA packing (H_k
// K/V heads read in place: query head h uses K/V head h / (H / H_k)), no SM margin. The dispatch
// is run_mha_fwd's for those: arch 90, the head dim (and V's) rounded up as round_up_headdim
// rounds it in this build (64, 96, 128 or 256; fa3.cmake disables 192, fa3.cu refuses the head
// dims FlashAttention-3 would run on it), run_mha_fwd_<90, T, d_rounded, d_rounded, ...>.
#include "fa3_call.h"

#include "flash.h"                 // Flash_fwd_params, run_mha_fwd_
#include <cutlass/numeric_types.h> // cutlass::half_t, cutlass::bfloat16_t: run_mha_fwd_'s types

#include <cuda_runtime.h>
#include <stdio.h>

#ifndef REPRO_FA3_SOURCE
#define REPRO_FA3_SOURCE "unknown"
#endif

namespace {

int round_multiple(int x, int m) { return (x + m - 1) / m * m; }
// hopper/flash_api.cpp's round_up_headdim with this build's FLASHATTENTION_DISABLE_HDIM192: the
// head dim of the instantiation run_mha_fwd_constexpr dispatches D to (D <= 256, fa3.cu).
int round_head_dim(int d) { return d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : 256; }

// The scheduler buffer's layout for a non-varlen call (mha_fwd): per-batch vectors for the
// batch sort and the head swizzle (b rounded up to 4 each), then the tile counter.
int batch_vectors_ints(int batch) { return 2 * round_multiple(batch, 4); }

Flash_fwd_params params_of(const fa3_call *call) {
  const peer_problem *c = &call->p;
  Flash_fwd_params p = {};
  const int H = c->heads, Hk = c->kv_heads, D = c->dim;
  // A single query row sees every key under the bottom-right causal mask (mha_fwd's rule).
  const bool causal = c->causal && c->q_len > 1;
  p.is_bf16 = c->bf16 != 0;
  p.q_ptr = const_cast<void *>(c->q);
  p.k_ptr = const_cast<void *>(c->k);
  p.v_ptr = const_cast<void *>(c->v);
  p.o_ptr = c->out;
  // Strides in elements: q, out [B, Lq, H, D], k, v [B, Lkv, H_k, D], contiguous.
  p.q_row_stride = p.o_row_stride = (int64_t)H * D;
  p.k_row_stride = p.v_row_stride = (int64_t)Hk * D;
  p.q_head_stride = p.k_head_stride = p.v_head_stride = p.o_head_stride = D;
  p.v_dim_stride = 1;
  p.q_batch_stride = p.o_batch_stride = (int64_t)c->q_len * H * D;
  p.k_batch_stride = p.v_batch_stride = (int64_t)c->kv_len * Hk * D;
  p.softmax_lse_ptr = call->lse;
  p.b = p.b_k = c->batch;
  p.h = H;
  p.h_k = Hk; // GQA in place: the kernel maps query head h to K/V head h / (H / H_k)
  p.seqlen_q = c->q_len;
  p.seqlen_k = c->kv_len;
  p.seqlen_q_rounded = round_multiple(c->q_len, 128);
  p.seqlen_k_rounded = round_multiple(c->kv_len, 128);
  p.d = p.dv = D;
  p.d_rounded = p.dv_rounded = round_head_dim(D);
  p.total_q = c->batch * c->q_len;
  p.total_k = c->batch * c->kv_len;
  p.scale_softmax = (float)c->scale;
  // The cap as flash_attn_func takes it (0: none); the kernel folds scale / cap into the
  // scores before its tanh and cap · log2 e into the exponent.
  p.softcap = c->softcap > 0 ? (float)c->softcap : 0.f;
  p.p_dropout = 1.f; // keep probability: no dropout
  p.p_dropout_in_uint8_t = 255;
  p.rp_dropout = 1.f;
  p.is_causal = causal;
  p.window_size_left = c->kv_len - 1;
  p.window_size_right = causal ? 0 : c->q_len - 1;
  p.page_size = 1;
  p.num_splits = 1;
  p.varlen_sort_batches = true; // !is_local
  p.head_swizzle = causal;
  p.arch = call->cc_major * 10 + call->cc_minor;
  p.num_sm = call->sm_count;
  // The dynamic persistent scheduler of the causal kernels claims tiles from this counter.
  if (causal) {
    p.tile_count_semaphore_offset = batch_vectors_ints(c->batch);
    p.tile_count_semaphore = call->scheduler + p.tile_count_semaphore_offset;
  }
  return p;
}

// run_mha_fwd_constexpr's branch for these params (Split, PagedKVNonTMA and PackGQA false,
// Has_softcap as SOFTCAP_SWITCH sets it: softcap > 0; dv == d, so no HDIMDIFF kernel).
template <typename T, bool Softcap> void run_dims(Flash_fwd_params &p, cudaStream_t stream) {
  switch (p.d_rounded) {
  case 64: run_mha_fwd_<90, T, 64, 64, false, false, Softcap, false>(p, stream); break;
  case 96: run_mha_fwd_<90, T, 96, 96, false, false, Softcap, false>(p, stream); break;
  case 128: run_mha_fwd_<90, T, 128, 128, false, false, Softcap, false>(p, stream); break;
  default: run_mha_fwd_<90, T, 256, 256, false, false, Softcap, false>(p, stream); break;
  }
}
template <typename T> void run_typed(Flash_fwd_params &p, cudaStream_t stream) {
  if (p.softcap > 0.f)
    run_dims<T, true>(p, stream);
  else
    run_dims<T, false>(p, stream);
}

} // namespace

extern "C" int fa3_scheduler_ints(int batch) { return batch_vectors_ints(batch) + 1; }

extern "C" const char *fa3_source(void) { return REPRO_FA3_SOURCE; }

extern "C" int fa3_forward(const fa3_call *call, void *stream, char *err, size_t err_len) {
  const peer_problem *c = &call->p;
  // mha_fwd's own checks of what this build runs (fa3.cu's supports() refuses the rest first)
  if (c->dim < 8 || c->dim > 256 || c->dim % 8 != 0 || c->kv_heads < 1 ||
      c->heads % c->kv_heads != 0) {
    snprintf(err, err_len, "fa3: head dim %d with %d query and %d K/V heads is not runnable",
             c->dim, c->heads, c->kv_heads);
    return -1;
  }
  Flash_fwd_params p = params_of(call);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (p.is_bf16)
    run_typed<cutlass::bfloat16_t>(p, s);
  else
    run_typed<cutlass::half_t>(p, s);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    snprintf(err, err_len, "fa3: launching FlashAttention-3's forward failed: %s",
             cudaGetErrorString(e));
    return -1;
  }
  return 0;
}
