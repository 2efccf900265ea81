// layers.cu: the element-wise and row-wise pieces of a Llama layer (embedding, RMSNorm, RoPE,
// SiLU·mul) and the device draws (weights, tokens, KeyFormer noise, CoRM mask). All math in
// fp32, stored once to fp16. Every launch is checked.
#include "draws.h"
#include "e2e.h"
#include "harness_gpu.h"

#include <cuda_fp16.h>

#include <limits.h>

static inline unsigned blocks_for(size_t n, unsigned threads) {
  size_t b = (n + threads - 1) / threads;
  return (unsigned)(b < 65535u * 16u ? b : 65535u * 16u); // grid-stride loops cover the rest
}

// ---- embedding --------------------------------------------------------------------------

// x[s, :] = embed[tokens[s], :], 8 halves (16 bytes) per thread.
__global__ void embed_kernel(const int32_t *tokens, const uint4 *embed, uint4 *x, int seqlen,
                             int vec_per_row) {
  size_t n = (size_t)seqlen * vec_per_row;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    size_t row = i / vec_per_row, col = i % vec_per_row;
    x[i] = embed[(size_t)tokens[row] * vec_per_row + col];
  }
}

extern "C" void e2e_embed(const int32_t *tokens, const uint16_t *embed, uint16_t *x, int seqlen,
                          int hidden, cudaStream_t s) {
  int vec = hidden / 8;
  embed_kernel<<<blocks_for((size_t)seqlen * vec, 256), 256, 0, s>>>(tokens, (const uint4 *)embed,
                                                                     (uint4 *)x, seqlen, vec);
  HX_CUDA_LAUNCH();
}

// ---- RMSNorm ----------------------------------------------------------------------------

// y = x / sqrt(mean(x²) + eps) · w, one block per row; n % 8 == 0 (16-byte vectors).
__global__ void rmsnorm_kernel(const uint4 *x, const uint4 *w, uint4 *y, int n, float eps) {
  __shared__ float warp_sums[32];
  int vec = n / 8;
  const uint4 *xr = x + (size_t)blockIdx.x * vec;
  uint4 *yr = y + (size_t)blockIdx.x * vec;
  float sum = 0.0f;
  for (int i = threadIdx.x; i < vec; i += blockDim.x) {
    uint4 v = xr[i];
    const __half2 *h = (const __half2 *)&v;
    for (int j = 0; j < 4; j++) {
      float2 f = __half22float2(h[j]);
      sum += f.x * f.x + f.y * f.y;
    }
  }
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    int nwarps = (blockDim.x + 31) >> 5;
    float t = threadIdx.x < nwarps ? warp_sums[threadIdx.x] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) t += __shfl_xor_sync(0xffffffffu, t, off);
    if (threadIdx.x == 0) warp_sums[0] = t;
  }
  __syncthreads();
  float inv_rms = rsqrtf(warp_sums[0] / (float)n + eps);
  for (int i = threadIdx.x; i < vec; i += blockDim.x) {
    uint4 v = xr[i], g = w[i], o;
    const __half2 *hv = (const __half2 *)&v, *hg = (const __half2 *)&g;
    __half2 *ho = (__half2 *)&o;
    for (int j = 0; j < 4; j++) {
      float2 a = __half22float2(hv[j]), b = __half22float2(hg[j]);
      ho[j] = __floats2half2_rn(a.x * inv_rms * b.x, a.y * inv_rms * b.y);
    }
    yr[i] = o;
  }
}

extern "C" void e2e_rmsnorm(const uint16_t *x, const uint16_t *w, uint16_t *y, int rows, int n,
                            float eps, cudaStream_t s) {
  rmsnorm_kernel<<<rows, 256, 0, s>>>((const uint4 *)x, (const uint4 *)w, (uint4 *)y, n, eps);
  HX_CUDA_LAUNCH();
}

// ---- RoPE -------------------------------------------------------------------------------

// In place on `tensors` consecutive [S, H, D] tensors (q then k). Pair (i, i + D/2) of the
// token at position s turns by s·theta^(-2i/D) (HF Llama's rotate_half convention; angles in
// fp32 as HF computes them). A thread turns 4 pairs (8-byte loads of both halves: D % 8 == 0,
// config.c) with 32-bit indices, the inverse frequencies from a per-block table: a pair per
// thread with its own powf and 64-bit index divisions is bound by that arithmetic, not by its
// 112 MB of traffic (PERF-e2e.md); same arithmetic per pair, so the same results.
#define ROPE_MAX_HALF 128 /* head_dim <= 256 (config.c) */
__global__ void rope_kernel(__half *qk, int seqlen, int heads, int head_dim, float theta,
                            int chunks) {
  __shared__ float inv_freq[ROPE_MAX_HALF];
  const int half_dim = head_dim / 2, cpr = half_dim / 4;
  for (int i = threadIdx.x; i < half_dim; i += blockDim.x)
    inv_freq[i] = powf(theta, -2.0f * (float)i / (float)head_dim);
  __syncthreads();
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < chunks; t += gridDim.x * blockDim.x) {
    const int row = t / cpr, c = t % cpr, pos = row / heads % seqlen; // row = (tensor, s, h)
    __half *v = qk + (size_t)row * head_dim + 4 * c;
    uint2 lo = *(const uint2 *)v, hi = *(const uint2 *)(v + half_dim);
    __half2 *l = (__half2 *)&lo, *h = (__half2 *)&hi;
#pragma unroll
    for (int j = 0; j < 2; j++) {
      float2 x1 = __half22float2(l[j]), x2 = __half22float2(h[j]);
      float s0, c0, s1, c1;
      sincosf((float)pos * inv_freq[4 * c + 2 * j], &s0, &c0);
      sincosf((float)pos * inv_freq[4 * c + 2 * j + 1], &s1, &c1);
      l[j] = __floats2half2_rn(x1.x * c0 - x2.x * s0, x1.y * c1 - x2.y * s1);
      h[j] = __floats2half2_rn(x2.x * c0 + x1.x * s0, x2.y * c1 + x1.y * s1);
    }
    *(uint2 *)v = lo;
    *(uint2 *)(v + half_dim) = hi;
  }
}

// the 32-bit chunk count of an element-wise kernel, or a clear stop
static int chunks_of(size_t n, const char *what) {
  if (n > (size_t)INT_MAX)
    hx_die(REPRO_EXIT_ERROR, "error", "%s: %zu chunks exceed the kernel's 32-bit indices", what, n);
  return (int)n;
}

extern "C" void e2e_rope(uint16_t *qk, int seqlen, int heads, int head_dim, float theta,
                         int tensors, cudaStream_t s) {
  if (head_dim % 8 || head_dim / 2 > ROPE_MAX_HALF)
    hx_die(REPRO_EXIT_ERROR, "error", "rope: head_dim %d (multiples of 8 up to 256)", head_dim);
  int chunks = chunks_of((size_t)tensors * seqlen * heads * (head_dim / 8), "rope");
  rope_kernel<<<blocks_for((size_t)chunks, 256), 256, 0, s>>>((__half *)qk, seqlen, heads, head_dim,
                                                              theta, chunks);
  HX_CUDA_LAUNCH();
}

// ---- SiLU·mul ---------------------------------------------------------------------------

// gu row r = [gate(mlp) | up(mlp)]; gate <- silu(gate)·up, 8 halves (16 bytes) of each per
// thread (mlp % 8 == 0, config.c), 32-bit indices: a half2 per thread with 64-bit index
// divisions falls well short of the bandwidth its 253 MB allow (PERF-e2e.md).
__global__ void silu_mul_kernel(uint4 *gu, int mlp, int chunks) {
  const int cpr = mlp / 8; // 16-byte chunks per half row; a row is 2·cpr of them
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < chunks; t += gridDim.x * blockDim.x) {
    const int r = t / cpr, c = t % cpr;
    uint4 *row = gu + (size_t)r * 2 * cpr;
    uint4 g = row[c], u = row[cpr + c];
    __half2 *gh = (__half2 *)&g;
    const __half2 *uh = (const __half2 *)&u;
#pragma unroll
    for (int j = 0; j < 4; j++) {
      float2 a = __half22float2(gh[j]), b = __half22float2(uh[j]);
      gh[j] = __floats2half2_rn(a.x / (1.0f + expf(-a.x)) * b.x, a.y / (1.0f + expf(-a.y)) * b.y);
    }
    row[c] = g;
  }
}

extern "C" void e2e_silu_mul(uint16_t *gu, int rows, int mlp, cudaStream_t s) {
  if (mlp % 8) hx_die(REPRO_EXIT_ERROR, "error", "silu_mul: mlp %d (a multiple of 8)", mlp);
  int chunks = chunks_of((size_t)rows * (mlp / 8), "silu_mul");
  silu_mul_kernel<<<blocks_for((size_t)chunks, 256), 256, 0, s>>>((uint4 *)gu, mlp, chunks);
  HX_CUDA_LAUNCH();
}

// ---- draws ------------------------------------------------------------------------------

static void need_aligned16(const float *dst) {
  if ((size_t)dst % 16)
    hx_die(REPRO_EXIT_ERROR, "error", "exp_rand: a 16-byte aligned buffer is expected");
}

// Columns [0, len) of one noise row whose first element has in-plane index idx0: four
// elements per thread and one 16-byte store where S % 4 == 0 (what fills the write bandwidth:
// PERF-e2e.md), else one by one.
__device__ __forceinline__ void fill_exp_rand_row(float *row, int len, int S, uint32_t key,
                                                  uint32_t idx0) {
  if (S % 4 == 0) {
    float4 *row4 = reinterpret_cast<float4 *>(row);
    for (int c = threadIdx.x; c < (len + 3) / 4; c += blockDim.x) {
      const uint32_t idx = idx0 + 4u * (uint32_t)c;
      row4[c] = make_float4(kf_draw_at(key, idx), kf_draw_at(key, idx + 1u),
                            kf_draw_at(key, idx + 2u), kf_draw_at(key, idx + 3u));
    }
  } else {
    for (int j = threadIdx.x; j < len; j += blockDim.x) row[j] = kf_draw_at(key, idx0 + j);
  }
}

// A block per row r = h·S + i of the [H, S, S] noise: the whole row, or with causal only its
// columns j <= i (the last quad may pass the diagonal by up to three draws, as valid as any).
// The values are draw_kf_noise's (draws.h).
__global__ void fill_exp_rand_kernel(float *dst, int rows, int S, kf_draw d, int causal) {
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const int h = r / S, i = r % S;
    fill_exp_rand_row(dst + (size_t)r * S, causal ? i + 1 : S, S, kf_draw_plane_key(d, h),
                      (uint32_t)((uint64_t)i * S));
  }
}

extern "C" void e2e_fill_exp_rand(float *dst, int rows, int S, uint64_t seed, int layer, int causal,
                                  cudaStream_t s) {
  need_aligned16(dst);
  fill_exp_rand_kernel<<<blocks_for((size_t)rows, 1), 256, 0, s>>>(
      dst, rows, S, draw_kf_noise(seed, layer), causal);
  HX_CUDA_LAUNCH();
}

__global__ void fill_corm_mask_kernel(float *dst, int seqlen) {
  size_t n = (size_t)seqlen * seqlen;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = 1.0f / (float)(i / seqlen + 1);
}

extern "C" void e2e_fill_corm_mask(float *dst, int seqlen, cudaStream_t s) {
  fill_corm_mask_kernel<<<blocks_for((size_t)seqlen * seqlen, 256), 256, 0, s>>>(dst, seqlen);
  HX_CUDA_LAUNCH();
}

__global__ void fill_normal_kernel(__half *dst, size_t n, uint64_t seed, uint32_t stream,
                                   float mean, float stddev) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint16_t bits = draw_weight(seed, stream, i, mean, stddev);
    dst[i] = __ushort_as_half(bits);
  }
}

extern "C" void e2e_fill_normal(uint16_t *dst, size_t n, uint64_t seed, uint32_t stream_id,
                                float mean, float stddev, cudaStream_t s) {
  fill_normal_kernel<<<blocks_for(n, 256), 256, 0, s>>>((__half *)dst, n, seed, stream_id, mean,
                                                        stddev);
  HX_CUDA_LAUNCH();
}

__global__ void fill_tokens_kernel(int32_t *dst, int n, int vocab, uint64_t seed) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dst[i] = draw_token(seed, (uint64_t)i, vocab);
}

extern "C" void e2e_fill_tokens(int32_t *dst, int n, int vocab, uint64_t seed, cudaStream_t s) {
  fill_tokens_kernel<<<blocks_for((size_t)n, 256), 256, 0, s>>>(dst, n, vocab, seed);
  HX_CUDA_LAUNCH();
}
