// gpuref.cu: a naive fp32 GPU reference for checking the GPU systems at sizes the CPU
// reference cannot reach (S = 4096 and beyond). Deliberately simple and unlike both systems:
// plain fp32 FMAs, no tensor cores, no S x S buffer, every logit recomputed from q and k.
//   row kernel    one block per query row: max, sum (-> lse), then out = sum_j p_j v_j in
//                 chunks of keys whose p are staged in shared memory; kf also its own lse
//   column kernel one block per key column of a K/V head: p_ij = exp(s_ij - lse_i) over the
//                 rows that see key j, of every query head of the head's group (GQA: G = H/Hkv
//                 heads, 1 for MHA): sum, sum of squares, KeyFormer sum, corm's relative margin
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

__device__ static float gr_logit(const gr_args &a, const float *row_f32, const uint16_t *other) {
  float dot = 0.0f;
  for (int d = 0; d < a.dim; d++) dot = fmaf(row_f32[d], gr_elem(a, other[d]), dot);
  float x = dot * a.scale;
  if (a.softcap) x = GEMMA2_SOFTCAP * tanhf(x / GEMMA2_SOFTCAP);
  return x;
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

extern "C" void gpuref_run(const attn_ctx *ctx, workload_id wl, const attn_shape *s,
                           const attn_io *in, const ref_outputs *out) {
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

  dim3 rows(s->q_len, s->heads, s->batch), cols(s->kv_len, shape_kv_heads(s), s->batch);
  if (workload_selected_blocks(wl)) {
    gr_blocks sb = {in->block_idx, shape_kv_heads(s), s->block_size, s->selected_blocks};
    gr_selected_kernel<<<rows, GR_THREADS, 0, ctx->stream>>>(a, sb, d_out);
  } else {
    gr_row_kernel<<<rows, GR_THREADS, 0, ctx->stream>>>(a, d_out, d_lse, d_lse + nrows);
  }
  HX_CUDA_LAUNCH();
  if (workload_has_column_pass(wl)) {
    gr_column_kernel<<<cols, GR_THREADS, 0, ctx->stream>>>(a, d_lse, d_lse + nrows, d_score,
                                                           d_score2, d_margin);
    HX_CUDA_LAUNCH();
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

__global__ void gr_fill_corm_mask_kernel(float *dst, size_t n, int cols) {
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n;
       e += (size_t)gridDim.x * blockDim.x)
    dst[e] = __fdiv_rn(1.0f, (float)(e / (size_t)cols + 1));
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
  gr_fill_corm_mask_kernel<<<grid_stride_blocks(n, 256), 256, 0, stream>>>((float *)dst, n,
                                                                           s->kv_len);
  HX_CUDA_LAUNCH();
}
