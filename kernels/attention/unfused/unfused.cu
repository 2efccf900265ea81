// unfused.cu: the eager strategy, what a framework without fusion runs (and the memory
// baseline of Figure 13). Every intermediate S x S tensor is materialised in device memory,
// like PyTorch eager with its caching allocator:
//   S16  = Q K^T                      cuBLAS strided-batched GEMM, 16-bit out, fp32 accumulate
//   S16  = mask(softcap(S16 * scale))  one elementwise kernel, in place
//   [COL_KEYFORMER] KF32 = softmax_j((S16 - log r) / tau), score = column sums of KF32
//   P32  = softmax(S16)               fp32 row softmax
//   [COL_SUM, COL_SUM_SQ, COL_ANY_GE_MASK] column reductions of P32 (then the pool, if any)
//   P16  = (16-bit) P32               written over S16, which is dead by then (the caching
//                                     allocator would hand eager the same block)
//   O    = P16 V                      cuBLAS, into [B, H, S, D] (each head's output one
//                                     contiguous matrix, as cuBLAS wants its outputs)
//   out  = O permuted to [B, S, H, D]  (eager's transpose(1, 2).contiguous())
// Workspace: S16/P16 (2 B) + P32 (4 B) per score element, + KF32 (4 B) for COL_KEYFORMER,
// + a [B,H,S] row of unpooled sums for pooled workloads, + O. Q, K, V are read in place in
// [B, S, H, D] (K, V: [B, S, Hkv, D]): head stride D, row stride H*D (Hkv*D). GQA (G = H/Hkv
// query heads per K/V head, 1 for MHA): query head h = g*G + r reads K/V head g, through one
// strided-batched GEMM per (b, r) over the Hkv heads g (K/V stride D, Q stride G*D); the column
// reductions of K/V head g sum (or, corm, any) over the G score matrices of its group, so
// score, score2 and flags are [B, Hkv, S], pooled after the sum. "16" is the cell's element type, fp16 or bf16
// (--dtype), as eager PyTorch keeps its intermediates in the inputs' dtype; the softmax and the
// column statistics run in fp32.
//
// Selected blocks (KEYS_SELECTED_BLOCKS, nsa), the naive PyTorch NSA (gather, masked softmax):
//   Kg, Vg = K, V gathered per (b, t, g): the N = T * BS keys of the query's list, zeros where
//            an entry is absent or past the keys          [B * Lq * Hkv, N, D] fp16 each
//   S16    = Q Kg^T per (b, t, g): the H/Hkv heads of the group against its keys (cuBLAS
//            strided-batched, one matrix per query and K/V head)     [B * Lq * H, N]
//   S16    = mask(S16 * scale): -inf on absent keys and, causal, keys past the query
//   P32 = softmax(S16), P16 = (fp16) P32 over S16, out = P16 Vg (cuBLAS, straight into
//   [B, Lq, H, D]: the group's heads are consecutive rows there).
// Workspace: Kg + Vg + S16 + P32; Kg and Vg grow with B * S * Hkv * T * BS * D, and a cell whose
// gathered copies do not fit ends with status=oom, as eager PyTorch would.
#include "attn_system.h"
#include "gpu_util.cuh"
#include "selected_blocks.h"
#include "workload.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdio.h>

#define UF_ALIGN       256
#define UF_ROW_THREADS 256
#define UF_COL_X       32 /* columns per block in the column reductions */
#define UF_COL_Y       8  /* row groups per block */

static size_t align_up(size_t x) { return (x + UF_ALIGN - 1) / UF_ALIGN * UF_ALIGN; }

// The 16-bit element type T (__half or __nv_bfloat16) and its conversions; uf_cuda_type is the
// cell's type for cuBLAS.
// Kernels that only move elements (gather, permute) take their bits as uint16_t.
__device__ __forceinline__ float uf_to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float uf_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T uf_from_float(float x);
template <> __device__ __forceinline__ __half uf_from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ __forceinline__ __nv_bfloat16 uf_from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
static cudaDataType_t uf_cuda_type(const attn_shape *s) {
  return s->dtype == DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
}

// Workspace layout (offsets in bytes).
typedef struct {
  size_t s16, p32, kf32, colsum, o, total;
} uf_layout;

static uf_layout uf_plan(workload_id wl, const attn_shape *s) {
  const workload_info *w = &workload_table[wl];
  size_t n = (size_t)s->batch * s->heads * s->q_len * s->kv_len;
  uf_layout l;
  l.s16 = 0;
  l.p32 = align_up(l.s16 + n * sizeof(uint16_t));
  l.kf32 = align_up(l.p32 + n * sizeof(float));
  l.colsum = align_up(l.kf32 + (w->column == COL_KEYFORMER ? n * sizeof(float) : 0));
  l.o = align_up(l.colsum + (w->pool ? shape_score_elems(s) * sizeof(float) : 0));
  l.total = align_up(l.o + shape_q_elems(s) * sizeof(uint16_t));
  return l;
}

// ---- kernels --------------------------------------------------------------------------------

// KEYS_SELECTED_BLOCKS: what the gathered key kk of list `list` is: its key index, or -1 when
// its entry is absent or past the keys (selected_blocks.h). The causal mask comes later.
__device__ static int uf_gathered_key(const int32_t *list, int kk, int block_size, int kv_len) {
  const int32_t blk = list[kk / block_size];
  if (blk < 0 || (long long)blk * block_size >= kv_len) return -1;
  const int j = blk * block_size + kk % block_size;
  return j < kv_len ? j : -1;
}

// Kg[l, kk, :] = K[b, j, g, :] for list l = (b * Lq + t) * Hkv + g and its gathered key kk -> j
// (zeros when absent); Vg likewise. Moves 8 halves (16 bytes) at a time when D % 8 == 0.
struct uf_gather_args {
  const uint16_t *k, *v; // 16-bit elements of either type
  uint16_t *kg, *vg;
  const int32_t *idx;
  int q_len, kv_len, kv_heads, dim, block_size, selected;
};

__global__ void uf_gather_kernel(uf_gather_args a, size_t units, int vec) {
  const int per_row = vec ? a.dim / 8 : a.dim, n = a.selected * a.block_size;
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < units;
       e += (size_t)gridDim.x * blockDim.x) {
    const int u = (int)(e % per_row);
    const size_t row = e / per_row; // (list, kk)
    const int kk = (int)(row % n);
    const size_t list = row / n;
    const int g = (int)(list % a.kv_heads);
    const size_t b = list / a.kv_heads / a.q_len;
    const int j = uf_gathered_key(a.idx + list * a.selected, kk, a.block_size, a.kv_len);
    const size_t src = ((b * a.kv_len + (j < 0 ? 0 : j)) * a.kv_heads + g) * a.dim;
    if (vec) {
      const uint4 zero = make_uint4(0, 0, 0, 0);
      reinterpret_cast<uint4 *>(a.kg)[e] =
          j < 0 ? zero : reinterpret_cast<const uint4 *>(a.k + src)[u];
      reinterpret_cast<uint4 *>(a.vg)[e] =
          j < 0 ? zero : reinterpret_cast<const uint4 *>(a.v + src)[u];
    } else {
      a.kg[e] = j < 0 ? 0 : a.k[src + u]; // +0 in both types
      a.vg[e] = j < 0 ? 0 : a.v[src + u];
    }
  }
}

// S <- mask(S * scale) over the [B * Lq * H, N] gathered scores: -inf where the key is absent
// or (offset: mask_offset) after the query.
template <typename T>
__global__ void uf_sel_mask_kernel(T *s, size_t n_elems, const int32_t *idx, int q_len, int kv_len,
                                   int heads, int kv_heads, int block_size, int selected,
                                   int offset, float scale) {
  const int n = selected * block_size;
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n_elems;
       e += (size_t)gridDim.x * blockDim.x) {
    const int kk = (int)(e % n);
    const size_t row = e / n; // (b, t, h)
    const int h = (int)(row % heads);
    const size_t bt = row / heads;
    const int t = (int)(bt % q_len);
    const size_t list = bt * kv_heads + h / (heads / kv_heads);
    const int j = uf_gathered_key(idx + list * selected, kk, block_size, kv_len);
    s[e] = uf_from_float<T>(j < 0 || j > t + offset ? -INFINITY : uf_to_float(s[e]) * scale);
  }
}

// S <- mask(softcap(S * scale)) on every [Lq, Lkv] matrix of the batch, in place.
template <typename T>
__global__ void uf_scale_mask_kernel(T *s, size_t n, int q_len, int kv_len, int offset, float scale,
                                     int softcap) {
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n;
       e += (size_t)gridDim.x * blockDim.x) {
    int j = (int)(e % kv_len);
    int i = (int)((e / kv_len) % q_len);
    float x = uf_to_float(s[e]) * scale;
    if (softcap) x = GEMMA2_SOFTCAP * tanhf(x / GEMMA2_SOFTCAP);
    s[e] = uf_from_float<T>(j > i + offset ? -INFINITY : x);
  }
}

// One block per row: p = softmax(x) over the row, where x = S (plain) or, for KeyFormer,
// (S - log r) / tau with r the row of exp_rand. -inf entries (the mask) give 0.
template <bool KEYFORMER, typename T>
__global__ void uf_softmax_kernel(const T *s, const float *exp_rand, float *p, int kv_len) {
  __shared__ float scratch[32];
  size_t row = blockIdx.x;
  const T *x = s + row * kv_len;
  const float *r = KEYFORMER ? exp_rand + row * kv_len : nullptr;
  float *y = p + row * kv_len;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < kv_len; j += blockDim.x) {
    float v = uf_to_float(x[j]);
    if (KEYFORMER) v = (v - logf(r[j])) / KF_TAU;
    y[j] = v; // staged: the second sweep reads the logits back from here
    m = fmaxf(m, v);
  }
  m = block_reduce(m, scratch, op_max());
  float sum = 0.0f;
  for (int j = threadIdx.x; j < kv_len; j += blockDim.x) {
    float e = expf(y[j] - m);
    y[j] = e;
    sum += e;
  }
  float inv = 1.0f / block_reduce(sum, scratch, op_sum());
  for (int j = threadIdx.x; j < kv_len; j += blockDim.x) y[j] *= inv;
}

template <typename T> __global__ void uf_cast_kernel(const float *p, T *p16, size_t n) {
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n;
       e += (size_t)gridDim.x * blockDim.x)
    p16[e] = uf_from_float<T>(p[e]);
}

// Column statistics of each group of G consecutive [Lq, Lkv] matrices (the query heads of one
// K/V head; G = 1 for MHA): grid (ceil(Lkv / 32), B*Hkv), block (32, 8). Thread (x, y) walks
// rows y, y+8, ... of column j of each matrix of the group; shared memory folds the 8 partials.
// SUM: out1 = sum_h,i P, out2 = sum_h,i P^2 (when out2). CORM: flags = any_h,i P >= mask[i][j].
template <bool CORM>
__global__ void uf_columns_kernel(const float *p, int q_len, int kv_len, int groups, float *out1,
                                  float *out2, const float *corm_mask, uint8_t *flags) {
  __shared__ float part1[UF_COL_Y][UF_COL_X], part2[UF_COL_Y][UF_COL_X];
  int j = blockIdx.x * UF_COL_X + threadIdx.x;
  size_t mat = blockIdx.y; // (b, K/V head): the output row
  float a1 = 0.0f, a2 = 0.0f;
  for (int r = 0; r < groups && j < kv_len; r++) {
    const float *col = p + (mat * groups + r) * q_len * (size_t)kv_len + j;
    for (int i = threadIdx.y; i < q_len; i += UF_COL_Y) {
      float v = col[(size_t)i * kv_len];
      if (CORM) {
        a1 = fmaxf(a1, v >= corm_mask[(size_t)i * kv_len + j] ? 1.0f : 0.0f);
      } else {
        a1 += v;
        a2 = fmaf(v, v, a2);
      }
    }
  }
  part1[threadIdx.y][threadIdx.x] = a1;
  part2[threadIdx.y][threadIdx.x] = a2;
  __syncthreads();
  if (threadIdx.y != 0 || j >= kv_len) return;
  for (int y = 1; y < UF_COL_Y; y++) {
    a1 = CORM ? fmaxf(a1, part1[y][threadIdx.x]) : a1 + part1[y][threadIdx.x];
    a2 += part2[y][threadIdx.x];
  }
  size_t c = mat * kv_len + j;
  if (CORM) {
    flags[c] = a1 > 0.0f;
  } else {
    out1[c] = a1;
    if (out2) out2[c] = a2;
  }
}

// out[b, i, h, :] = o[b, h, i, :]
__global__ void uf_permute_kernel(const uint16_t *o, uint16_t *out, int heads, int q_len, int dim,
                                  size_t n) {
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n;
       e += (size_t)gridDim.x * blockDim.x) {
    int d = (int)(e % dim);
    size_t r = e / dim;
    int h = (int)(r % heads);
    r /= heads;
    int i = (int)(r % q_len);
    size_t b = r / q_len;
    out[e] = o[((b * heads + h) * q_len + i) * dim + d];
  }
}

// avg_pool1d(kernel w, padding w/2, stride 1), zero padding counted, over rows of n.
__global__ void uf_pool_kernel(const float *x, float *y, size_t rows, int n, int w) {
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < rows * n;
       e += (size_t)gridDim.x * blockDim.x) {
    size_t row = e / n;
    int j = (int)(e % n);
    float s = 0.0f;
    for (int t = max(0, j - w / 2); t <= min(n - 1, j + w / 2); t++) s += x[row * n + t];
    y[e] = s / w;
  }
}

// ---- the GEMMs --------------------------------------------------------------------------------

// S[b, h] = Q[b, :, h, :] K[b, :, h / G, :]^T for every head, one strided-batched call per
// batch index b and head r of a group (the batch stride of [B, S, H, D] is not a multiple of
// the head stride), batched over the Hkv K/V heads g: query head h = g*G + r (Q stride G*D,
// S stride G*Lq*Lkv), K/V head g (stride D). G = 1 (MHA) is one call per b over the H heads.
// Row-major S [Lq, Lkv] is column-major S^T [Lkv, Lq] = K Q^T: op(A) = K^T-as-stored.
static int uf_qk(const attn_ctx *ctx, const attn_shape *s, const uint16_t *q, const uint16_t *k,
                 uint16_t *scores) {
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t type = uf_cuda_type(s);
  const int G = shape_groups(s), hkv = shape_kv_heads(s);
  const int ld = s->heads * s->dim, ldk = hkv * s->dim;
  const size_t mat = (size_t)s->q_len * s->kv_len;
  for (int b = 0; b < s->batch; b++)
    for (int r = 0; r < G; r++) {
      const uint16_t *qb = q + (size_t)b * s->q_len * ld + (size_t)r * s->dim;
      const uint16_t *kb = k + (size_t)b * s->kv_len * ldk;
      uint16_t *sb = scores + ((size_t)b * s->heads + r) * mat;
      ATTN_TRY_CUBLAS(ctx, cublasGemmStridedBatchedEx(
                               (cublasHandle_t)ctx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, s->kv_len,
                               s->q_len, s->dim, &one, kb, type, ldk, s->dim, qb, type, ld,
                               (long long)G * s->dim, &zero, sb, type, s->kv_len,
                               (long long)G * mat, hkv, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
  return ATTN_OK;
}

// o[b, h] = P16[b, h] V[b, :, h / G, :]: column-major o^T [D, Lq] = V^T P16^T, both operands
// as stored; o is [B, H, Lq, D], one contiguous [Lq, D] matrix per head. Batched like uf_qk.
static int uf_pv(const attn_ctx *ctx, const attn_shape *s, const uint16_t *p16, const uint16_t *v,
                 uint16_t *o) {
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t type = uf_cuda_type(s);
  const int G = shape_groups(s), hkv = shape_kv_heads(s);
  const int ldv = hkv * s->dim;
  const size_t mat = (size_t)s->q_len * s->kv_len, omat = (size_t)s->q_len * s->dim;
  for (int b = 0; b < s->batch; b++)
    for (int r = 0; r < G; r++) {
      const uint16_t *vb = v + (size_t)b * s->kv_len * ldv;
      const uint16_t *pb = p16 + ((size_t)b * s->heads + r) * mat;
      uint16_t *ob = o + ((size_t)b * s->heads + r) * omat;
      ATTN_TRY_CUBLAS(ctx, cublasGemmStridedBatchedEx(
                               (cublasHandle_t)ctx->cublas, CUBLAS_OP_N, CUBLAS_OP_N, s->dim,
                               s->q_len, s->kv_len, &one, vb, type, ldv, s->dim, pb, type,
                               s->kv_len, (long long)G * mat, &zero, ob, type, s->dim,
                               (long long)G * omat, hkv, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
  return ATTN_OK;
}

// KEYS_SELECTED_BLOCKS workspace (bytes): Kg | Vg | S16 | P32.
typedef struct {
  size_t kg, vg, s16, p32, total;
} uf_sel_layout;

static uf_sel_layout uf_sel_plan(const attn_shape *s) {
  size_t lists = (size_t)s->batch * s->q_len * shape_kv_heads(s);
  size_t n = (size_t)s->selected_blocks * s->block_size;
  size_t scores = (size_t)s->batch * s->q_len * s->heads * n;
  uf_sel_layout l;
  l.kg = 0;
  l.vg = align_up(lists * n * s->dim * sizeof(uint16_t));
  l.s16 = 2 * l.vg; /* Kg and Vg are the same size */
  l.p32 = align_up(l.s16 + scores * sizeof(uint16_t));
  l.total = align_up(l.p32 + scores * sizeof(float));
  return l;
}

// The selected-block workload (see the top of this file), T the element type.
template <typename T>
static int uf_run_selected(const attn_ctx *ctx, const attn_shape *s, const attn_io *io,
                           void *workspace) {
  const uf_sel_layout l = uf_sel_plan(s);
  char *ws = (char *)workspace;
  uint16_t *kg = (uint16_t *)(ws + l.kg), *vg = (uint16_t *)(ws + l.vg);
  T *s16 = (T *)(ws + l.s16);
  const cudaDataType_t type = uf_cuda_type(s);
  float *p32 = (float *)(ws + l.p32);
  const int Hkv = shape_kv_heads(s), hpg = shape_groups(s), D = s->dim;
  const int n = s->selected_blocks * s->block_size;
  const int lists = s->batch * s->q_len * Hkv;
  const size_t n_scores = (size_t)s->batch * s->q_len * s->heads * n;

  uf_gather_args ga = {(const uint16_t *)io->k,
                       (const uint16_t *)io->v,
                       kg,
                       vg,
                       io->block_idx,
                       s->q_len,
                       s->kv_len,
                       Hkv,
                       D,
                       s->block_size,
                       s->selected_blocks};
  const int vec = D % 8 == 0;
  const size_t units = (size_t)lists * n * (vec ? D / 8 : D);
  uf_gather_kernel<<<grid_stride_blocks(units, 256), 256, 0, ctx->stream>>>(ga, units, vec);
  ATTN_TRY_LAUNCH(ctx, "uf_gather_kernel");

  // S^T [n, hpg] (column-major) = Kg Q^T per list: row-major S [hpg, n]
  const float one = 1.0f, zero = 0.0f;
  cublasHandle_t handle = (cublasHandle_t)ctx->cublas;
  ATTN_TRY_CUBLAS(ctx, cublasGemmStridedBatchedEx(
                           handle, CUBLAS_OP_T, CUBLAS_OP_N, n, hpg, D, &one, kg, type, D,
                           (long long)n * D, io->q, type, D, (long long)hpg * D, &zero, s16, type,
                           n, (long long)hpg * n, lists, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  uf_sel_mask_kernel<<<grid_stride_blocks(n_scores, 256), 256, 0, ctx->stream>>>(
      s16, n_scores, io->block_idx, s->q_len, s->kv_len, s->heads, Hkv, s->block_size,
      s->selected_blocks, mask_offset(s), (float)shape_scale(s));
  ATTN_TRY_LAUNCH(ctx, "uf_sel_mask_kernel");
  const unsigned rows = (unsigned)((size_t)s->batch * s->q_len * s->heads);
  uf_softmax_kernel<false, T><<<rows, UF_ROW_THREADS, 0, ctx->stream>>>(s16, NULL, p32, n);
  ATTN_TRY_LAUNCH(ctx, "uf_softmax_kernel");
  uf_cast_kernel<<<grid_stride_blocks(n_scores, 256), 256, 0, ctx->stream>>>(p32, s16, n_scores);
  ATTN_TRY_LAUNCH(ctx, "uf_cast_kernel");
  // out^T [D, hpg] (column-major) = Vg^T P16^T per list: out [B, Lq, H, D] row-major
  ATTN_TRY_CUBLAS(ctx, cublasGemmStridedBatchedEx(
                           handle, CUBLAS_OP_N, CUBLAS_OP_N, D, hpg, n, &one, vg, type, D,
                           (long long)n * D, s16, type, n, (long long)hpg * n, &zero, io->out, type,
                           D, (long long)hpg * D, lists, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return ATTN_OK;
}

// ---- the system ---------------------------------------------------------------------------------

static int uf_column_stats(const attn_ctx *ctx, const attn_shape *s, const float *p, float *out1,
                           float *out2, const float *corm_mask, uint8_t *flags) {
  dim3 grid((s->kv_len + UF_COL_X - 1) / UF_COL_X, s->batch * shape_kv_heads(s));
  dim3 block(UF_COL_X, UF_COL_Y);
  const int G = shape_groups(s);
  if (flags)
    uf_columns_kernel<true>
        <<<grid, block, 0, ctx->stream>>>(p, s->q_len, s->kv_len, G, NULL, NULL, corm_mask, flags);
  else
    uf_columns_kernel<false>
        <<<grid, block, 0, ctx->stream>>>(p, s->q_len, s->kv_len, G, out1, out2, NULL, NULL);
  ATTN_TRY_LAUNCH(ctx, "uf_columns_kernel");
  return ATTN_OK;
}

// The column statistic of P32 (or of KF32) into the workload's outputs, pooled if asked.
static int uf_columns(const attn_ctx *ctx, workload_id wl, const attn_shape *s, const attn_io *io,
                      const float *p, float *colsum) {
  const workload_info *w = &workload_table[wl];
  float *sums = w->pool ? colsum : io->score;
  switch (w->column) {
  case COL_NONE: return ATTN_OK;
  case COL_SUM:
  case COL_KEYFORMER: ATTN_TRY(uf_column_stats(ctx, s, p, sums, NULL, NULL, NULL)); break;
  case COL_SUM_SQ: ATTN_TRY(uf_column_stats(ctx, s, p, sums, io->score2, NULL, NULL)); break;
  case COL_ANY_GE_MASK: return uf_column_stats(ctx, s, p, NULL, NULL, io->corm_mask, io->flags);
  }
  if (!w->pool) return ATTN_OK;
  size_t ns = shape_score_elems(s);
  uf_pool_kernel<<<grid_stride_blocks(ns, 256), 256, 0, ctx->stream>>>(
      colsum, io->score, (size_t)s->batch * shape_kv_heads(s), s->kv_len, w->pool);
  ATTN_TRY_LAUNCH(ctx, "uf_pool_kernel");
  return ATTN_OK;
}

static int uf_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *s, char *why,
                       size_t why_len) {
  (void)ctx;
  if ((int)wl < 0 || wl >= WL_COUNT) {
    snprintf(why, why_len, "unknown workload %d", (int)wl);
    return ATTN_UNSUPPORTED;
  }
  if (workload_table[wl].pool && workload_table[wl].column != COL_SUM) {
    snprintf(why, why_len, "pooling is implemented for COL_SUM only");
    return ATTN_UNSUPPORTED;
  }
  if (s->q_len > s->kv_len) {
    snprintf(why, why_len, "q_len %d > kv_len %d leaves rows fully masked", s->q_len, s->kv_len);
    return ATTN_UNSUPPORTED;
  }
  if (s->dtype != DTYPE_FP16 && s->dtype != DTYPE_BF16) {
    snprintf(why, why_len, "unfused runs fp16 and bf16 only");
    return ATTN_UNSUPPORTED;
  }
  if (s->heads % shape_kv_heads(s) != 0) {
    snprintf(why, why_len, "heads %d are no multiple of the K/V heads %d", s->heads,
             shape_kv_heads(s));
    return ATTN_UNSUPPORTED;
  }
  if (workload_selected_blocks(wl)) {
    const char *problem = sb_shape_problem(s);
    if (problem) {
      snprintf(why, why_len, "%s", problem);
      return ATTN_UNSUPPORTED;
    }
    if ((size_t)s->batch * s->q_len * shape_kv_heads(s) > 0x7fffffffu) {
      snprintf(why, why_len, "B*Lq*Hkv exceeds cuBLAS's batch count");
      return ATTN_UNSUPPORTED;
    }
    return ATTN_OK;
  }
  if ((size_t)s->batch * shape_kv_heads(s) > 65535u) {
    snprintf(why, why_len, "%s %d*%d exceeds the column kernel's grid",
             shape_groups(s) > 1 ? "batch*kv_heads" : "batch*heads", s->batch, shape_kv_heads(s));
    return ATTN_UNSUPPORTED;
  }
  return ATTN_OK;
}

static size_t uf_workspace_bytes(const attn_ctx *ctx, workload_id wl, const attn_shape *s) {
  (void)ctx;
  return workload_selected_blocks(wl) ? uf_sel_plan(s).total : uf_plan(wl, s).total;
}

// The dense workloads, T the element type.
template <typename T>
static int uf_run_dense(const attn_ctx *ctx, workload_id wl, const attn_shape *s, const attn_io *io,
                        void *workspace) {
  const workload_info *w = &workload_table[wl];
  uf_layout l = uf_plan(wl, s);
  char *ws = (char *)workspace;
  T *s16 = (T *)(ws + l.s16);
  float *p32 = (float *)(ws + l.p32);
  float *colsum = (float *)(ws + l.colsum);
  size_t n = (size_t)s->batch * s->heads * s->q_len * s->kv_len;
  unsigned rows = (unsigned)((size_t)s->batch * s->heads * s->q_len);

  ATTN_TRY(uf_qk(ctx, s, (const uint16_t *)io->q, (const uint16_t *)io->k, (uint16_t *)s16));
  uf_scale_mask_kernel<<<grid_stride_blocks(n, 256), 256, 0, ctx->stream>>>(
      s16, n, s->q_len, s->kv_len, mask_offset(s), (float)shape_scale(s),
      w->logits == LOGITS_SOFTCAP);
  ATTN_TRY_LAUNCH(ctx, "uf_scale_mask_kernel");
  if (w->column == COL_KEYFORMER) {
    float *kf32 = (float *)(ws + l.kf32);
    uf_softmax_kernel<true, T>
        <<<rows, UF_ROW_THREADS, 0, ctx->stream>>>(s16, io->exp_rand, kf32, s->kv_len);
    ATTN_TRY_LAUNCH(ctx, "uf_softmax_kernel<keyformer>");
    ATTN_TRY(uf_columns(ctx, wl, s, io, kf32, colsum));
  }
  uf_softmax_kernel<false, T><<<rows, UF_ROW_THREADS, 0, ctx->stream>>>(s16, NULL, p32, s->kv_len);
  ATTN_TRY_LAUNCH(ctx, "uf_softmax_kernel");
  if (w->column != COL_KEYFORMER) ATTN_TRY(uf_columns(ctx, wl, s, io, p32, colsum));
  uf_cast_kernel<<<grid_stride_blocks(n, 256), 256, 0, ctx->stream>>>(p32, s16, n);
  ATTN_TRY_LAUNCH(ctx, "uf_cast_kernel");
  uint16_t *o = (uint16_t *)(ws + l.o);
  ATTN_TRY(uf_pv(ctx, s, (const uint16_t *)s16, (const uint16_t *)io->v, o));
  size_t nq = shape_q_elems(s);
  uf_permute_kernel<<<grid_stride_blocks(nq, 256), 256, 0, ctx->stream>>>(
      o, (uint16_t *)io->out, s->heads, s->q_len, s->dim, nq);
  ATTN_TRY_LAUNCH(ctx, "uf_permute_kernel");
  return ATTN_OK;
}

// One cell in the element type T (uf_run picks it).
template <typename T>
static int uf_run_typed(const attn_ctx *ctx, workload_id wl, const attn_shape *s, const attn_io *io,
                        void *workspace) {
  return workload_selected_blocks(wl) ? uf_run_selected<T>(ctx, s, io, workspace)
                                      : uf_run_dense<T>(ctx, wl, s, io, workspace);
}

static int uf_run(const attn_ctx *ctx, workload_id wl, const attn_shape *s, const attn_io *io,
                  void *workspace) {
  return s->dtype == DTYPE_BF16 ? uf_run_typed<__nv_bfloat16>(ctx, wl, s, io, workspace)
                                : uf_run_typed<__half>(ctx, wl, s, io, workspace);
}

static const char *uf_impl(const attn_ctx *ctx, workload_id wl, const attn_shape *s) {
  (void)ctx;
  (void)s;
  return workload_selected_blocks(wl) ? "unfused-gather-cublas" : "unfused-cublas";
}

extern "C" const attn_system attn_system_unfused = {"unfused", uf_supports, uf_workspace_bytes,
                                                    uf_run, uf_impl};
