// select.cu: the KV-cache selection of each workload (its `select` feature in
// workloads.def), after its attention produced the per-key scores (workload.h: score, score2,
// flags [heads, S]). Rules (as in the FlashTensor artifact; budgets in e2e_config):
//   SEL_TOPK      keep the top `keep` keys of score per head;
//   SEL_TOPK_STD  keep the top `keep_std` keys by the standard deviation of their attention
//                 over the q_len queries, sqrt(score2/q - (score/q)²), then the top `keep`
//                 of score among the rest;
//   SEL_FLAGS     keep the keys the flags mark; when more than `corm_cap` are marked, the
//                 `corm_cap` most recent ones (highest positions), a recent window in CoRM's
//                 spirit, so the cache has a fixed size;
//   SEL_NONE      select nothing.
// Top-k ties go to the lower position. Kept positions are written in ascending order to
// cache_idx (rest -1), their count to cache_count, and K and V rows are gathered into the
// layer's cache. One block per head: S is a few thousand, the selection is microseconds.
#include "e2e.h"
#include "harness_gpu.h"

#include <cub/block/block_scan.cuh>
#include <cuda_fp16.h>

enum { KEY_SCORE, KEY_STD };
#define SELECT_THREADS 512

typedef cub::BlockScan<int, SELECT_THREADS> block_scan;

// Float -> unsigned int with the same order (larger float, larger key).
__device__ inline uint32_t ordered_key(float f) {
  uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ inline uint32_t key_at(int mode, const float *score, const float *score2, int j,
                                  float q_len) {
  if (mode == KEY_SCORE) return ordered_key(score[j]);
  float mean = score[j] / q_len;
  float var = score2[j] / q_len - mean * mean;
  return ordered_key(sqrtf(var > 0.0f ? var : 0.0f));
}

// Mark in flags[head, :] the k largest keys among the positions not yet marked.
// Radix select over the 32-bit ordered keys, 8 bits a pass, finds the k-th largest key T
// and how many keys equal to T still fit; a final ordered pass marks keys > T and the first
// such equal keys by position (block scan), so ties go to the lower position.
__global__ void topk_flags_kernel(int mode, const float *score, const float *score2, int S,
                                  float q_len, int k, uint8_t *flags) {
  __shared__ int hist[256];
  __shared__ uint32_t s_prefix;
  __shared__ int s_need, s_candidates;
  __shared__ typename block_scan::TempStorage scan_tmp;
  __shared__ int s_carry;
  const size_t base = (size_t)blockIdx.x * S;
  score += base;
  if (score2) score2 += base;
  flags += base;

  if (threadIdx.x == 0) s_candidates = 0;
  __syncthreads();
  int mine = 0;
  for (int j = threadIdx.x; j < S; j += blockDim.x) mine += flags[j] == 0;
  atomicAdd(&s_candidates, mine);
  __syncthreads();
  if (s_candidates <= k) { // everything left fits
    for (int j = threadIdx.x; j < S; j += blockDim.x) flags[j] = 1;
    return;
  }

  uint32_t prefix = 0, mask = 0;
  int need = k;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0;
    __syncthreads();
    for (int j = threadIdx.x; j < S; j += blockDim.x) {
      if (flags[j]) continue;
      uint32_t key = key_at(mode, score, score2, j, q_len);
      if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 0xffu], 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      int above = 0, b = 255;
      while (above + hist[b] < need) above += hist[b--];
      s_prefix = prefix | ((uint32_t)b << shift);
      s_need = need - above;
    }
    __syncthreads();
    prefix = s_prefix;
    need = s_need;
    mask |= 0xffu << shift;
    __syncthreads(); // hist is reset at the top of the next pass
  }

  // prefix is now the k-th largest key; `need` keys equal to it are kept, lowest first.
  if (threadIdx.x == 0) s_carry = 0;
  __syncthreads();
  for (int start = 0; start < S; start += blockDim.x) {
    int j = start + threadIdx.x;
    int free_slot = j < S && flags[j] == 0;
    uint32_t key = free_slot ? key_at(mode, score, score2, j, q_len) : 0u;
    int is_eq = free_slot && key == prefix;
    int rank, total;
    block_scan(scan_tmp).ExclusiveSum(is_eq, rank, total);
    int carry = s_carry;
    if (free_slot && (key > prefix || (is_eq && carry + rank < need))) flags[j] = 1;
    __syncthreads();
    if (threadIdx.x == 0) s_carry = carry + total;
    __syncthreads();
  }
}

// flags[head, :] -> ascending positions in idx[head, 0..count), -1 after; when more than
// cap are marked, the last cap of them.
__global__ void compact_kernel(const uint8_t *flags, int S, int cap, int32_t *idx, int32_t *count) {
  __shared__ typename block_scan::TempStorage scan_tmp;
  __shared__ int s_total, s_carry;
  flags += (size_t)blockIdx.x * S;
  idx += (size_t)blockIdx.x * cap;
  if (threadIdx.x == 0) s_total = 0, s_carry = 0;
  __syncthreads();
  int mine = 0;
  for (int j = threadIdx.x; j < S; j += blockDim.x) mine += flags[j] != 0;
  atomicAdd(&s_total, mine);
  __syncthreads();
  const int total = s_total, skip = total > cap ? total - cap : 0;
  for (int start = 0; start < S; start += blockDim.x) {
    int j = start + threadIdx.x;
    int marked = j < S && flags[j] != 0;
    int pos, chunk;
    block_scan(scan_tmp).ExclusiveSum(marked, pos, chunk);
    pos += s_carry;
    if (marked && pos >= skip) idx[pos - skip] = j;
    __syncthreads();
    if (threadIdx.x == 0) s_carry += chunk;
    __syncthreads();
  }
  const int kept = total - skip;
  for (int slot = kept + threadIdx.x; slot < cap; slot += blockDim.x) idx[slot] = -1;
  if (threadIdx.x == 0) count[blockIdx.x] = kept;
}

// k_cache[h, slot, :] = k[idx[h, slot], h, :] (and v) for slot < count[h]; block (slot, h),
// one 16-byte vector per thread.
__global__ void gather_kernel(const uint4 *k, const uint4 *v, const int32_t *idx,
                              const int32_t *count, int heads, int cap, int vec_per_head,
                              uint4 *k_cache, uint4 *v_cache) {
  int slot = blockIdx.x, h = blockIdx.y;
  if (slot >= count[h]) return;
  size_t src = ((size_t)idx[(size_t)h * cap + slot] * heads + h) * vec_per_head;
  size_t dst = ((size_t)h * cap + slot) * vec_per_head;
  for (int i = threadIdx.x; i < vec_per_head; i += blockDim.x) {
    k_cache[dst + i] = k[src + i];
    v_cache[dst + i] = v[src + i];
  }
}

static void topk(int mode, const float *score, const float *score2, const e2e_model *m, int k,
                 cudaStream_t s) {
  const e2e_config *c = &m->cfg;
  topk_flags_kernel<<<c->heads, SELECT_THREADS, 0, s>>>(mode, score, score2, c->seqlen,
                                                        (float)c->seqlen, k, m->keep_flags);
  HX_CUDA_LAUNCH();
}

extern "C" void e2e_select(const e2e_model *m, int layer, cudaStream_t s) {
  const e2e_config *c = &m->cfg;
  const int S = c->seqlen, H = c->heads, cap = m->cache_cap;
  if (cap == 0) return;
  const uint8_t *flags = m->keep_flags;
  size_t flag_bytes = (size_t)H * S;
  switch (workload_table[c->workload].select) {
  case SEL_TOPK:
    HX_CUDA(cudaMemsetAsync(m->keep_flags, 0, flag_bytes, s));
    topk(KEY_SCORE, m->score, NULL, m, c->keep, s);
    break;
  case SEL_TOPK_STD:
    HX_CUDA(cudaMemsetAsync(m->keep_flags, 0, flag_bytes, s));
    topk(KEY_STD, m->score, m->score2, m, c->keep_std, s);
    topk(KEY_SCORE, m->score, NULL, m, c->keep, s);
    break;
  case SEL_FLAGS: flags = m->attn_flags; break;
  case SEL_NONE: return;
  }
  int32_t *idx = m->cache_idx + (size_t)layer * H * cap;
  int32_t *count = m->cache_count + (size_t)layer * H;
  compact_kernel<<<H, SELECT_THREADS, 0, s>>>(flags, S, cap, idx, count);
  HX_CUDA_LAUNCH();

  const size_t hd = (size_t)H * S * c->head_dim; // elements of one of q, k, v
  const int vec = c->head_dim / 8;
  size_t layer_cache = (size_t)H * cap * c->head_dim;
  dim3 grid(cap, H);
  const int threads = vec < 128 ? vec : 128;
  gather_kernel<<<grid, threads, 0, s>>>(
      (const uint4 *)(m->qkv + hd), (const uint4 *)(m->qkv + 2 * hd), idx, count, H, cap, vec,
      (uint4 *)(m->k_cache + layer * layer_cache), (uint4 *)(m->v_cache + layer * layer_cache));
  HX_CUDA_LAUNCH();
}
