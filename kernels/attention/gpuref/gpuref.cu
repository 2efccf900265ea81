// gpuref.cu: the fp32 GPU reference for checking the GPU systems at sizes the CPU reference
// cannot reach (S = 4096 and beyond). Deliberately simple and unlike both systems: plain fp32
// FMAs, no tensor cores, no S x S buffer, every logit recomputed from q and k, each dot product
// summed over d in order (so both forms below give bit-identical logits).
// Two forms of the dense kernels (gpuref_impl):
//   tiled (default): one block per tile of GR_TILE query rows (the row kernel) or keys (the
//                 column kernel) of one head, the other operand staged in shared memory a tile
//                 of GR_TILE rows at a time, so each K, V or Q row is read once per tile, not
//                 once per row: the same sums as the naive form, in another order
//     row kernel    the online max and sum of each row (-> lse; kf its own), then out =
//                   sum_j p_j v_j with each key tile's p staged in shared memory
//     column kernel p_ij = exp(s_ij - lse_i) over the rows that see key j, of every query head
//                   of the K/V head's group (GQA: G = H/Hkv heads, 1 for MHA): sum, sum of
//                   squares, KeyFormer sum, corm's relative margin
//   naive: one block per query row or key column, the simplest statement of the math, which
//     the tiled form is checked against (attnvar --gpuref both):
//     row kernel    max, sum (-> lse), then out = sum_j p_j v_j in chunks of keys whose p are
//                   staged in shared memory; kf also its own lse
//     column kernel one block per key column of a K/V head, the sums above
//   pool kernel   the average pool over the column sums (workloads with pool > 0)
//   selected kernel  KEYS_SELECTED_BLOCKS: one block per (query, head): the keys of the query's
//                 list (selected_blocks.h) from its K/V head, max, sum, then out like the row
//                 kernel; a query without a key gets 0
// Also the device generators of inputs.def's FILL_GEN rows (the host's: ref/ref.c).
#include "gpuref.h"

#include "gpu_util.cuh"
#include "harness_gpu.h"
#include "kf_draw.h"
#include "rng.h"
#include "selected_blocks.h"
#include "workload.h"

#include <cuda_fp16.h>
#include <math.h>
#include <stdlib.h>

#define GR_THREADS 128
#define GR_MAX_DIM 256

struct gr_args {
  const uint16_t *q, *k, *v; // fp16 or bf16 bits (bf16)
  const float *exp_rand, *corm_mask;
  int batch, heads, dim, q_len, kv_len;
  int kv_heads;        // Hkv: query head h reads K/V head h / (heads / kv_heads)
  int bf16;            // element type of q, k, v
  int offset;          // mask_offset: row i sees keys 0..i + offset
  int softcap, column; // the workload's features (logits == LOGITS_SOFTCAP, column_kind)
  float scale;
};

// q_i . k_j with one operand already in shared memory as fp32 and the other in global fp16,
// then scale and (LOGITS_SOFTCAP) soft cap: the logit before the mask.
__device__ static float gr_elem(const gr_args &a, uint16_t bits) {
  return rng_elem_to_float(bits, a.bf16);
}

// A dot product scaled and (LOGITS_SOFTCAP) soft-capped: the logit, shared by both forms.
__device__ static float gr_scaled(const gr_args &a, float dot) {
  float x = dot * a.scale;
  if (a.softcap) x = GEMMA2_SOFTCAP * tanhf(x / GEMMA2_SOFTCAP);
  return x;
}

__device__ static float gr_logit(const gr_args &a, const float *row_f32, const uint16_t *other) {
  float dot = 0.0f;
  for (int d = 0; d < a.dim; d++) dot = fmaf(row_f32[d], gr_elem(a, other[d]), dot);
  return gr_scaled(a, dot);
}

__device__ static const uint16_t *gr_row(const uint16_t *t, const gr_args &a, int len, int b, int i,
                                         int h) {
  return t + (((size_t)b * len + i) * a.heads + h) * a.dim;
}

// Row j of K/V head g of k or v ([B, Lkv, Hkv, D]).
__device__ static const uint16_t *gr_kv_row(const uint16_t *t, const gr_args &a, int b, int j,
                                            int g) {
  return t + (((size_t)b * a.kv_len + j) * a.kv_heads + g) * a.dim;
}

__device__ static float gr_kf_logit(const gr_args &a, int b, int h, int i, int j, float x) {
  size_t idx = (((size_t)b * a.heads + h) * a.q_len + i) * a.kv_len + j;
  return (x - logf(a.exp_rand[idx])) / KF_TAU;
}

__device__ static void load_row_f32(const gr_args &a, const uint16_t *src, float *dst, int n) {
  for (int d = threadIdx.x; d < n; d += blockDim.x) dst[d] = gr_elem(a, src[d]);
  __syncthreads();
}

// grid (Lq, H, B). Writes out (fp32, [B, Lq, H, D]), lse and lse_kf ([B, H, Lq]).
__global__ void gr_row_kernel(gr_args a, float *out, float *lse, float *lse_kf) {
  __shared__ float q_row[GR_MAX_DIM];
  __shared__ float p_chunk[GR_THREADS];
  __shared__ float scratch[32];
  int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  int g = h / (a.heads / a.kv_heads);
  load_row_f32(a, gr_row(a.q, a, a.q_len, b, i, h), q_row, a.dim);
  int last = min(a.kv_len - 1, i + a.offset); // keys 0..last are visible

  float m = -INFINITY, mk = -INFINITY;
  for (int j = threadIdx.x; j <= last; j += blockDim.x) {
    float x = gr_logit(a, q_row, gr_kv_row(a.k, a, b, j, g));
    m = fmaxf(m, x);
    if (a.column == COL_KEYFORMER) mk = fmaxf(mk, gr_kf_logit(a, b, h, i, j, x));
  }
  m = block_reduce(m, scratch, op_max());
  if (a.column == COL_KEYFORMER) mk = block_reduce(mk, scratch, op_max());
  float l = 0.0f, lk = 0.0f;
  for (int j = threadIdx.x; j <= last; j += blockDim.x) {
    float x = gr_logit(a, q_row, gr_kv_row(a.k, a, b, j, g));
    l += expf(x - m);
    if (a.column == COL_KEYFORMER) lk += expf(gr_kf_logit(a, b, h, i, j, x) - mk);
  }
  l = block_reduce(l, scratch, op_sum());
  float row_lse = m + logf(l);
  if (a.column == COL_KEYFORMER) lk = block_reduce(lk, scratch, op_sum());

  // out: each thread owns dims threadIdx.x and threadIdx.x + 128 (D <= 256)
  float acc0 = 0.0f, acc1 = 0.0f;
  int d0 = threadIdx.x, d1 = threadIdx.x + GR_THREADS;
  for (int base = 0; base <= last; base += GR_THREADS) {
    int j = base + threadIdx.x;
    const uint16_t *k = gr_kv_row(a.k, a, b, j <= last ? j : 0, g);
    p_chunk[threadIdx.x] = j <= last ? expf(gr_logit(a, q_row, k) - row_lse) : 0.0f;
    __syncthreads();
    int n = min(GR_THREADS, last + 1 - base);
    for (int t = 0; t < n; t++) {
      const uint16_t *v = gr_kv_row(a.v, a, b, base + t, g);
      if (d0 < a.dim) acc0 = fmaf(p_chunk[t], gr_elem(a, v[d0]), acc0);
      if (d1 < a.dim) acc1 = fmaf(p_chunk[t], gr_elem(a, v[d1]), acc1);
    }
    __syncthreads();
  }
  float *o = out + (((size_t)b * a.q_len + i) * a.heads + h) * a.dim;
  if (d0 < a.dim) o[d0] = acc0;
  if (d1 < a.dim) o[d1] = acc1;
  if (threadIdx.x == 0) {
    size_t r = ((size_t)b * a.heads + h) * a.q_len + i;
    lse[r] = row_lse;
    if (a.column == COL_KEYFORMER) lse_kf[r] = mk + logf(lk);
  }
}

// grid (Lkv, Hkv, B). Writes score (sum, or KeyFormer's sum), score2 (sum of squares) and
// margin (corm: max_i p/mask - 1), all [B, Hkv, Lkv], over the G query heads of K/V head g.
__global__ void gr_column_kernel(gr_args a, const float *lse, const float *lse_kf, float *score,
                                 float *score2, float *margin) {
  __shared__ float k_row[GR_MAX_DIM];
  __shared__ float scratch[32];
  int j = blockIdx.x, g = blockIdx.y, b = blockIdx.z;
  int G = a.heads / a.kv_heads;
  load_row_f32(a, gr_kv_row(a.k, a, b, j, g), k_row, a.dim);
  int first = max(0, j - a.offset); // rows first..Lq-1 see key j
  float sum = 0.0f, sum_sq = 0.0f, mg = -INFINITY;
  for (int h = g * G; h < (g + 1) * G; h++)
    for (int i = first + threadIdx.x; i < a.q_len; i += blockDim.x) {
      float x = gr_logit(a, k_row, gr_row(a.q, a, a.q_len, b, i, h));
      size_t r = ((size_t)b * a.heads + h) * a.q_len + i;
      if (a.column == COL_KEYFORMER) {
        sum += expf(gr_kf_logit(a, b, h, i, j, x) - lse_kf[r]);
        continue;
      }
      float p = expf(x - lse[r]);
      sum += p;
      sum_sq = fmaf(p, p, sum_sq);
      if (a.column == COL_ANY_GE_MASK) {
        float mk = a.corm_mask[(size_t)i * a.kv_len + j];
        mg = fmaxf(mg, mk > 0.0f ? p / mk - 1.0f : p - mk);
      }
    }
  sum = block_reduce(sum, scratch, op_sum());
  sum_sq = block_reduce(sum_sq, scratch, op_sum());
  mg = block_reduce(mg, scratch, op_max());
  if (threadIdx.x == 0) {
    size_t c = ((size_t)b * a.kv_heads + g) * a.kv_len + j;
    score[c] = sum;
    score2[c] = sum_sq;
    margin[c] = mg;
  }
}

// ---- the tiled form -----------------------------------------------------------------------
// A block of GR_TILE_THREADS threads: 32 rows (query rows in the row kernel, keys in the column
// kernel) x 8 lanes each; lane c8 of a row takes the other operand's tile rows c8, c8 + 8, ..
// Shared rows are padded to D + 1 floats so the rows a warp reads fall in different banks.
#define GR_TILE         32
#define GR_TILE_LANES   8
#define GR_TILE_THREADS (GR_TILE * GR_TILE_LANES)

// The logit of two fp32 rows in shared memory: the same ordered sum as gr_logit.
__device__ static float gr_logit_f32(const gr_args &a, const float *x, const float *y) {
  float dot = 0.0f;
  for (int d = 0; d < a.dim; d++) dot = fmaf(x[d], y[d], dot);
  return gr_scaled(a, dot);
}

// Rows first .. first + GR_TILE - 1 of a [B, len, heads_of, D] tensor's head h into dst
// (GR_TILE rows of pitch D + 1), zeros past len.
__device__ static void gr_load_tile(const gr_args &a, const uint16_t *t, int len, int heads_of,
                                    int b, int first, int h, float *dst) {
  const int pitch = a.dim + 1;
  for (int e = threadIdx.x; e < GR_TILE * a.dim; e += blockDim.x) {
    const int r = e / a.dim, d = e % a.dim, row = first + r;
    dst[r * pitch + d] =
        row < len ? gr_elem(a, t[(((size_t)b * len + row) * heads_of + h) * a.dim + d]) : 0.0f;
  }
}

// An online max and sum (m, l) folding in one more value, and two of them merged.
struct gr_online {
  float m = -INFINITY, l = 0.0f;
  __device__ void add(float x) {
    if (x > m) {
      l = l * expf(m - x) + 1.0f;
      m = x;
    } else {
      l += expf(x - m);
    }
  }
  __device__ void merge(float m2, float l2) {
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) {
      m = m2, l = l2;
      return;
    }
    const float mx = fmaxf(m, m2);
    l = l * expf(m - mx) + l2 * expf(m2 - mx);
    m = mx;
  }
  // Merged over the GR_TILE_LANES lanes of a row (consecutive lanes of one warp).
  __device__ void merge_lanes() {
    for (int w = 1; w < GR_TILE_LANES; w *= 2)
      merge(__shfl_xor_sync(0xffffffffu, m, w), __shfl_xor_sync(0xffffffffu, l, w));
  }
  __device__ float lse() const { return m + logf(l); }
};

__device__ static float gr_sum_lanes(float v) {
  for (int w = 1; w < GR_TILE_LANES; w *= 2) v += __shfl_xor_sync(0xffffffffu, v, w);
  return v;
}
__device__ static float gr_max_lanes(float v) {
  for (int w = 1; w < GR_TILE_LANES; w *= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, w));
  return v;
}

// Shared memory of the tiled row kernel: Q, K and V tiles (pitch D + 1) and the p tile.
static size_t gr_row_tiled_smem(int dim) {
  return (3 * (size_t)GR_TILE * (dim + 1) + GR_TILE * (GR_TILE + 1)) * sizeof(float);
}

// grid (ceil(Lq / GR_TILE), H, B). The same outputs as gr_row_kernel.
__global__ void gr_row_tiled_kernel(gr_args a, float *out, float *lse, float *lse_kf) {
  extern __shared__ float gr_smem[];
  const int pitch = a.dim + 1;
  float *q_s = gr_smem, *k_s = q_s + GR_TILE * pitch, *v_s = k_s + GR_TILE * pitch;
  float *p_s = v_s + GR_TILE * pitch; // [GR_TILE][GR_TILE + 1]
  const int i0 = blockIdx.x * GR_TILE, h = blockIdx.y, b = blockIdx.z;
  const int g = h / (a.heads / a.kv_heads);
  const int r = threadIdx.x / GR_TILE_LANES, c8 = threadIdx.x % GR_TILE_LANES, i = i0 + r;
  const int last = min(a.kv_len - 1, i + a.offset); // row i sees keys 0 .. last
  const int block_last = min(a.kv_len - 1, min(i0 + GR_TILE, a.q_len) - 1 + a.offset);
  const bool row_live = i < a.q_len;
  gr_load_tile(a, a.q, a.q_len, a.heads, b, i0, h, q_s);

  gr_online st, st_kf;
  for (int k0 = 0; k0 <= block_last; k0 += GR_TILE) {
    __syncthreads(); // the previous tile's readers are done
    gr_load_tile(a, a.k, a.kv_len, a.kv_heads, b, k0, g, k_s);
    __syncthreads();
    for (int c = c8; c < GR_TILE; c += GR_TILE_LANES) {
      const int j = k0 + c;
      if (!row_live || j > last) continue;
      const float x = gr_logit_f32(a, q_s + r * pitch, k_s + c * pitch);
      st.add(x);
      if (a.column == COL_KEYFORMER) st_kf.add(gr_kf_logit(a, b, h, i, j, x));
    }
  }
  st.merge_lanes();
  st_kf.merge_lanes();
  const float row_lse = st.lse();

  float acc[GR_MAX_DIM / GR_TILE_LANES]; // dims c8 + 8 dd
  for (int dd = 0; dd < GR_MAX_DIM / GR_TILE_LANES; dd++) acc[dd] = 0.0f;
  for (int k0 = 0; k0 <= block_last; k0 += GR_TILE) {
    __syncthreads();
    gr_load_tile(a, a.k, a.kv_len, a.kv_heads, b, k0, g, k_s);
    gr_load_tile(a, a.v, a.kv_len, a.kv_heads, b, k0, g, v_s);
    __syncthreads();
    for (int c = c8; c < GR_TILE; c += GR_TILE_LANES) {
      const int j = k0 + c;
      p_s[r * (GR_TILE + 1) + c] =
          row_live && j <= last ? expf(gr_logit_f32(a, q_s + r * pitch, k_s + c * pitch) - row_lse)
                                : 0.0f;
    }
    __syncwarp(); // a row's p are written and read by its own 8 lanes, in one warp
    for (int c = 0; c < GR_TILE; c++) {
      const float p = p_s[r * (GR_TILE + 1) + c];
#pragma unroll
      for (int dd = 0; dd < GR_MAX_DIM / GR_TILE_LANES; dd++) {
        const int d = c8 + dd * GR_TILE_LANES;
        if (d < a.dim) acc[dd] = fmaf(p, v_s[c * pitch + d], acc[dd]);
      }
    }
  }
  if (!row_live) return;
  float *o = out + (((size_t)b * a.q_len + i) * a.heads + h) * a.dim;
#pragma unroll
  for (int dd = 0; dd < GR_MAX_DIM / GR_TILE_LANES; dd++) {
    const int d = c8 + dd * GR_TILE_LANES;
    if (d < a.dim) o[d] = acc[dd];
  }
  if (c8 == 0) {
    const size_t row = ((size_t)b * a.heads + h) * a.q_len + i;
    lse[row] = row_lse;
    if (a.column == COL_KEYFORMER) lse_kf[row] = st_kf.lse();
  }
}

// Shared memory of the tiled column kernel: K and Q tiles (pitch D + 1) and the Q tile's lse.
static size_t gr_column_tiled_smem(int dim) {
  return (2 * (size_t)GR_TILE * (dim + 1) + 2 * GR_TILE) * sizeof(float);
}

// grid (ceil(Lkv / GR_TILE), Hkv, B). The same outputs as gr_column_kernel.
__global__ void gr_column_tiled_kernel(gr_args a, const float *lse, const float *lse_kf,
                                       float *score, float *score2, float *margin) {
  extern __shared__ float gr_smem[];
  const int pitch = a.dim + 1;
  float *k_s = gr_smem, *q_s = k_s + GR_TILE * pitch, *lse_s = q_s + GR_TILE * pitch;
  const int j0 = blockIdx.x * GR_TILE, g = blockIdx.y, b = blockIdx.z;
  const int G = a.heads / a.kv_heads;
  const int c = threadIdx.x / GR_TILE_LANES, r8 = threadIdx.x % GR_TILE_LANES, j = j0 + c;
  const int first = max(0, j - a.offset); // rows first .. Lq - 1 see key j
  const int block_first = max(0, j0 - a.offset) / GR_TILE * GR_TILE;
  gr_load_tile(a, a.k, a.kv_len, a.kv_heads, b, j0, g, k_s);
  const float *row_lse = a.column == COL_KEYFORMER ? lse_kf : lse;

  float sum = 0.0f, sum_sq = 0.0f, mg = -INFINITY;
  for (int h = g * G; h < (g + 1) * G; h++)
    for (int i0 = block_first; i0 < a.q_len; i0 += GR_TILE) {
      __syncthreads(); // the previous tile's readers are done (and K is in)
      gr_load_tile(a, a.q, a.q_len, a.heads, b, i0, h, q_s);
      for (int r = threadIdx.x; r < GR_TILE; r += blockDim.x)
        lse_s[r] = i0 + r < a.q_len ? row_lse[((size_t)b * a.heads + h) * a.q_len + i0 + r] : 0.0f;
      __syncthreads();
      if (j >= a.kv_len) continue;
      for (int r = r8; r < GR_TILE; r += GR_TILE_LANES) {
        const int i = i0 + r;
        if (i >= a.q_len || i < first) continue;
        const float x = gr_logit_f32(a, k_s + c * pitch, q_s + r * pitch);
        if (a.column == COL_KEYFORMER) {
          sum += expf(gr_kf_logit(a, b, h, i, j, x) - lse_s[r]);
          continue;
        }
        const float p = expf(x - lse_s[r]);
        sum += p;
        sum_sq = fmaf(p, p, sum_sq);
        if (a.column == COL_ANY_GE_MASK) {
          const float mk = a.corm_mask[(size_t)i * a.kv_len + j];
          mg = fmaxf(mg, mk > 0.0f ? p / mk - 1.0f : p - mk);
        }
      }
    }
  sum = gr_sum_lanes(sum);
  sum_sq = gr_sum_lanes(sum_sq);
  mg = gr_max_lanes(mg);
  if (r8 == 0 && j < a.kv_len) {
    const size_t col = ((size_t)b * a.kv_heads + g) * a.kv_len + j;
    score[col] = sum;
    score2[col] = sum_sq;
    margin[col] = mg;
  }
}

// pooled[j] = (x[j-w/2] + .. + x[j+w/2]) / w with zeros outside the row; rows of n.
__global__ void gr_pool_kernel(const float *x, float *pooled, size_t rows, int n, int w) {
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < rows * n;
       e += (size_t)gridDim.x * blockDim.x) {
    size_t row = e / n;
    int j = (int)(e % n);
    float s = 0.0f;
    for (int t = j - w / 2; t <= j + w / 2; t++)
      if (t >= 0 && t < n) s += x[row * n + t];
    pooled[e] = s / w;
  }
}

// KEYS_SELECTED_BLOCKS. grid (Lq, H, B). The gathered key kk (0 <= kk < T * BS) of query i is
// key j = list[kk / BS] * BS + kk % BS of K/V head g = h / (H / Hkv); it counts when its block
// is live (sb_block_live), j < Lkv and the mask allows it. Writes out (fp32, [B, Lq, H, D]).
struct gr_blocks {
  const int32_t *idx; // [B, Lq, Hkv, T]
  int kv_heads, block_size, selected;
};

__device__ static int gr_gathered_key(const gr_args &a, const gr_blocks &sb, const int32_t *list,
                                      int i, int kk) {
  const int32_t blk = list[kk / sb.block_size];
  if (blk < 0 || (long long)blk * sb.block_size >= a.kv_len) return -1;
  const int j = blk * sb.block_size + kk % sb.block_size;
  return j < a.kv_len && j <= i + a.offset ? j : -1;
}

__global__ void gr_selected_kernel(gr_args a, gr_blocks sb, float *out) {
  __shared__ float q_row[GR_MAX_DIM];
  __shared__ float p_chunk[GR_THREADS];
  __shared__ int j_chunk[GR_THREADS];
  __shared__ float scratch[32];
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int g = h / (a.heads / sb.kv_heads), n = sb.selected * sb.block_size;
  const int32_t *list = sb.idx + (((size_t)b * a.q_len + i) * sb.kv_heads + g) * sb.selected;
  load_row_f32(a, gr_row(a.q, a, a.q_len, b, i, h), q_row, a.dim);
  auto key_row = [&](const uint16_t *t, int j) {
    return t + (((size_t)b * a.kv_len + j) * sb.kv_heads + g) * a.dim;
  };

  float m = -INFINITY;
  for (int kk = threadIdx.x; kk < n; kk += blockDim.x) {
    const int j = gr_gathered_key(a, sb, list, i, kk);
    if (j >= 0) m = fmaxf(m, gr_logit(a, q_row, key_row(a.k, j)));
  }
  m = block_reduce(m, scratch, op_max());
  float l = 0.0f;
  for (int kk = threadIdx.x; kk < n; kk += blockDim.x) {
    const int j = gr_gathered_key(a, sb, list, i, kk);
    if (j >= 0) l += expf(gr_logit(a, q_row, key_row(a.k, j)) - m);
  }
  l = block_reduce(l, scratch, op_sum());

  float acc0 = 0.0f, acc1 = 0.0f;
  const int d0 = threadIdx.x, d1 = threadIdx.x + GR_THREADS;
  for (int base = 0; base < n; base += GR_THREADS) {
    const int j = base + threadIdx.x < n ? gr_gathered_key(a, sb, list, i, base + threadIdx.x) : -1;
    p_chunk[threadIdx.x] = j >= 0 ? expf(gr_logit(a, q_row, key_row(a.k, j)) - m) / l : 0.0f;
    j_chunk[threadIdx.x] = j;
    __syncthreads();
    for (int t = 0; t < min(GR_THREADS, n - base); t++) {
      if (j_chunk[t] < 0) continue;
      const uint16_t *v = key_row(a.v, j_chunk[t]);
      if (d0 < a.dim) acc0 = fmaf(p_chunk[t], gr_elem(a, v[d0]), acc0);
      if (d1 < a.dim) acc1 = fmaf(p_chunk[t], gr_elem(a, v[d1]), acc1);
    }
    __syncthreads();
  }
  float *o = out + (((size_t)b * a.q_len + i) * a.heads + h) * a.dim;
  if (d0 < a.dim) o[d0] = acc0; // l == 0 (no key): every p is 0, out 0
  if (d1 < a.dim) o[d1] = acc1;
}

static void to_host_double(double *dst, const float *src_dev, size_t n) {
  if (!dst) return;
  float *tmp = (float *)hx_host_alloc(n * sizeof *tmp, "gpuref copy");
  hx_dev_to_host(tmp, src_dev, n * sizeof *tmp);
  for (size_t e = 0; e < n; e++) dst[e] = tmp[e];
  hx_host_free(tmp);
}

extern "C" int gpuref_has_workload(const workload_info *w) {
  return workload_features_within(w, ~0u, ~0u, ~0u); // every feature of workload.h
}

extern "C" int gpuref_supports(const attn_shape *s) {
  return s->dim <= GR_MAX_DIM && s->q_len <= s->kv_len && s->heads <= 65535 && s->batch <= 65535 &&
         s->heads % shape_kv_heads(s) == 0;
}

// The dense row and column kernels of the chosen form (the column kernel when the workload has
// a column pass).
static void gr_launch_dense(const attn_ctx *ctx, workload_id wl, const attn_shape *s,
                            const gr_args &a, gpuref_impl impl, float *d_out, float *d_lse,
                            float *d_score, float *d_score2, float *d_margin) {
  const size_t nrows = (size_t)s->batch * s->heads * s->q_len;
  const int hkv = shape_kv_heads(s);
  if (impl == GPUREF_NAIVE) {
    dim3 rows(s->q_len, s->heads, s->batch), cols(s->kv_len, hkv, s->batch);
    gr_row_kernel<<<rows, GR_THREADS, 0, ctx->stream>>>(a, d_out, d_lse, d_lse + nrows);
    HX_CUDA_LAUNCH();
    if (!workload_has_column_pass(wl)) return;
    gr_column_kernel<<<cols, GR_THREADS, 0, ctx->stream>>>(a, d_lse, d_lse + nrows, d_score,
                                                           d_score2, d_margin);
    HX_CUDA_LAUNCH();
    return;
  }
  const size_t row_smem = gr_row_tiled_smem(s->dim), col_smem = gr_column_tiled_smem(s->dim);
  HX_CUDA(cudaFuncSetAttribute(gr_row_tiled_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)row_smem));
  dim3 rows((s->q_len + GR_TILE - 1) / GR_TILE, s->heads, s->batch);
  gr_row_tiled_kernel<<<rows, GR_TILE_THREADS, row_smem, ctx->stream>>>(a, d_out, d_lse,
                                                                        d_lse + nrows);
  HX_CUDA_LAUNCH();
  if (!workload_has_column_pass(wl)) return;
  HX_CUDA(cudaFuncSetAttribute(gr_column_tiled_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)col_smem));
  dim3 cols((s->kv_len + GR_TILE - 1) / GR_TILE, hkv, s->batch);
  gr_column_tiled_kernel<<<cols, GR_TILE_THREADS, col_smem, ctx->stream>>>(
      a, d_lse, d_lse + nrows, d_score, d_score2, d_margin);
  HX_CUDA_LAUNCH();
}

extern "C" void gpuref_run(const attn_ctx *ctx, workload_id wl, const attn_shape *s,
                           const attn_io *in, const ref_outputs *out, gpuref_impl impl) {
  gr_args a = {(const uint16_t *)in->q,
               (const uint16_t *)in->k,
               (const uint16_t *)in->v,
               in->exp_rand,
               in->corm_mask,
               s->batch,
               s->heads,
               s->dim,
               s->q_len,
               s->kv_len,
               shape_kv_heads(s),
               s->dtype == DTYPE_BF16,
               mask_offset(s),
               workload_table[wl].logits == LOGITS_SOFTCAP,
               (int)workload_table[wl].column,
               s->scale > 0 ? (float)s->scale : 1.0f / sqrtf((float)s->dim)};
  size_t nq = shape_q_elems(s), ns = shape_score_elems(s);
  size_t nrows = (size_t)s->batch * s->heads * s->q_len;
  float *d_out = (float *)hx_dev_alloc(nq * sizeof(float), "gpuref out");
  float *d_lse = (float *)hx_dev_alloc(2 * nrows * sizeof(float), "gpuref lse");
  float *d_cols = (float *)hx_dev_alloc(4 * ns * sizeof(float), "gpuref columns");
  float *d_score = d_cols, *d_score2 = d_cols + ns, *d_margin = d_cols + 2 * ns;
  float *d_pooled = d_cols + 3 * ns;

  if (workload_selected_blocks(wl)) { // a few keys a row: one block per (query, head)
    dim3 rows(s->q_len, s->heads, s->batch);
    gr_blocks sb = {in->block_idx, shape_kv_heads(s), s->block_size, s->selected_blocks};
    gr_selected_kernel<<<rows, GR_THREADS, 0, ctx->stream>>>(a, sb, d_out);
    HX_CUDA_LAUNCH();
  } else {
    gr_launch_dense(ctx, wl, s, a, impl, d_out, d_lse, d_score, d_score2, d_margin);
  }
  if (workload_table[wl].pool) {
    gr_pool_kernel<<<grid_stride_blocks(ns, 256), 256, 0, ctx->stream>>>(
        d_score, d_pooled, (size_t)s->batch * shape_kv_heads(s), s->kv_len,
        workload_table[wl].pool);
    HX_CUDA_LAUNCH();
    d_score = d_pooled;
  }
  HX_CUDA(cudaStreamSynchronize(ctx->stream));

  to_host_double(out->out, d_out, nq);
  if (out->score) to_host_double(out->score, d_score, ns);
  if (out->score2) to_host_double(out->score2, d_score2, ns);
  if (out->corm_margin) {
    to_host_double(out->corm_margin, d_margin, ns);
    for (size_t e = 0; e < ns; e++) out->flags[e] = out->corm_margin[e] >= 0;
  }
  hx_dev_free(d_cols);
  hx_dev_free(d_lse);
  hx_dev_free(d_out);
}

// ---- the device generators of inputs.def's FILL_GEN rows ------------------------------------

__global__ void gr_fill_exp_rand_kernel(float *dst, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = kf_exp_rand(seed, i);
}

__global__ void gr_fill_corm_mask_kernel(float *dst, size_t n, int cols, int varied) {
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n;
       e += (size_t)gridDim.x * blockDim.x) {
    const float v = __fdiv_rn(1.0f, (float)(e / (size_t)cols + 1));
    dst[e] = varied && (e % (size_t)cols) % 2 ? __fmul_rn(v, CORM_VARIED_FACTOR) : v;
  }
}

extern "C" void gpuref_fill_exp_rand(void *dst, size_t n, const attn_shape *s, uint64_t seed,
                                     cudaStream_t stream) {
  (void)s;
  if (!n) return;
  gr_fill_exp_rand_kernel<<<grid_stride_blocks(n, 256), 256, 0, stream>>>((float *)dst, n, seed);
  HX_CUDA_LAUNCH();
}

extern "C" void gpuref_fill_corm_mask(void *dst, size_t n, const attn_shape *s, uint64_t seed,
                                      cudaStream_t stream) {
  (void)seed;
  if (!n) return;
  gr_fill_corm_mask_kernel<<<grid_stride_blocks(n, 256), 256, 0, stream>>>(
      (float *)dst, n, s->kv_len, s->corm_varied);
  HX_CUDA_LAUNCH();
}
