// The fused-diag kernels: the fused forward and column pass (kernels/attention/fused/) with a cache of
// the k score tiles nearest the diagonal of each query block (kernels/attention/fused_diag/diag_band.h
// says which tiles and where they live).
//
//   P1 (diag_fwd_sm90 / diag_fwd_sm80): the fused forward (out, row LSE). For a key block in
//      the band of its query block it also writes the tile's exponentials e = exp2(x - m), the
//      very values the forward has just formed for P·V, and each row's running maximum m
//      (log2 domain) they are relative to.
//   P4 (diag_col_sm90 / diag_col_sm80): the fused column pass. For a query block whose tile
//      with this key block is in the band it reads e and m instead of recomputing Sᵀ = K·Qᵀ
//      and the exponentials: P = e · exp2(m - lse), one exp2 per query row and tile (staged
//      in shared memory on sm_90a) instead of one per element. Other tiles: as in fused.
//
// Why exponentials and not raw scores: the column pass's costs per element are the Sᵀ MMA and
// one exp2; raw scores would save only the MMA, and an fp16 raw score (|x| up to ~20 in the
// log2 domain) loses ~1e-2 absolute, i.e. ~1 % relative in P. The exponentials are in
// [0, 1], where fp16 keeps 11 bits of relative precision, the precision the forward's own
// P·V product uses. The price is m: T floats per tile (0.8 % of an fp32 tile).
//
// Only the workloads whose column statistic is a function of P alone take the cache
// (COL_SUM, COL_SUM_SQ, pooled or not: h2o, roco, snapkv); the kernels are instantiated for
// those only. The element logic (RowState, ColState, score_log2) and the tile loaders come
// from the fused headers unchanged.
#pragma once
#include "diag_band.h"
#include "fused/fused_sm90.cuh"

namespace fused_diag {

using namespace fused;

// The cache the kernels share: tiles [B*H*tph][T keys][T queries] of CT (float or half),
// rowmax [B*H*tph][T] (log2 domain), k key blocks per query block (k >= 1 here).
struct DiagCache {
  void *tiles;
  float *rowmax;
  int k;
  long long tph; // tiles per (batch, head)
};

template <int WL> __host__ __device__ constexpr bool cacheable() {
  return wl_traits<WL>::column == COL_SUM || wl_traits<WL>::column == COL_SUM_SQ;
}

template <typename CT> __device__ __forceinline__ CT to_cache(float v);
template <> __device__ __forceinline__ float to_cache<float>(float v) { return v; }
template <> __device__ __forceinline__ half to_cache<half>(float v) { return __float2half_rn(v); }

template <typename CT> __device__ __forceinline__ float2 load_pair(const CT *p);
template <> __device__ __forceinline__ float2 load_pair<float>(const float *p) {
  return __ldg(reinterpret_cast<const float2 *>(p));
}
template <> __device__ __forceinline__ float2 load_pair<half>(const half *p) {
  return __half22float2(__ldg(reinterpret_cast<const __half2 *>(p)));
}

// P1 side: s holds e = exp2(x - m) (RowState::update has run) of this thread's rows row_l and
// row_l + 8 (within the tile) and columns nt * 8 + 2t + {0, 1}. Key-major stores: the eight
// lanes of one t write 8 consecutive rows of one key, one 32-byte sector (fp32).
template <int T, typename CT, int NT>
__device__ __forceinline__ void diag_store(const DiagCache &c, long long tile,
                                           const float (&s)[NT][4], const RowState &st, int row_l,
                                           int t) {
  CT *pt = static_cast<CT *>(c.tiles) + tile * T * T;
#pragma unroll
  for (int nt = 0; nt < NT; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) {
      const int r = row_l + (e >> 1) * 8, col = nt * 8 + 2 * t + (e & 1);
      pt[col * T + r] = to_cache<CT>(s[nt][e]);
    }
  if (t == 0) {
#pragma unroll
    for (int rr = 0; rr < 2; rr++)
      c.rowmax[tile * T + row_l + rr * 8] = st.m[rr] == -CUDART_INF_F ? 0.f : st.m[rr];
  }
}

// P4 side: one element's probability into the column state (ColState::add's COL_SUM and
// COL_SUM_SQ arms, from P instead of the score).
template <int WL> __device__ __forceinline__ void add_prob(ColState<WL> &cs, int rr, float prob) {
  cs.acc[rr] += prob;
  if (wl_traits<WL>::sum_sq) cs.acc2[rr] += prob * prob;
}

// P4 side: a cached tile into the column state. This thread's keys are jl0 and jl0 + 8
// (within the tile), its queries nt * 8 + 2t + {0, 1}; factor(il) = exp2(m - lse) of query il
// (0 for rows past Lq). live(il, jl) is the fused kernels' element mask, needed on edge tiles.
template <int T, typename CT, int WL, int NT, typename Factor, typename Live>
__device__ __forceinline__ void diag_col_tile(ColState<WL> &cs, const CT *pt, int jl0, int t,
                                              Factor factor, Live live) {
#pragma unroll
  for (int nt = 0; nt < NT; nt++) {
    const int il = nt * 8 + 2 * t;
    const float2 f = factor(il);
#pragma unroll
    for (int rr = 0; rr < 2; rr++) {
      const int jl = jl0 + rr * 8;
      const float2 e = load_pair<CT>(pt + jl * T + il);
      add_prob(cs, rr, live(il, jl) ? e.x * f.x : 0.f);
      add_prob(cs, rr, live(il + 1, jl) ? e.y * f.y : 0.f);
    }
  }
}

// ---- sm_90a ---------------------------------------------------------------------------------
// Tiles of 128: the forward's 128-row blocks with 128-key stages (two warpgroups, Cfg90<2, 128>
// as the plain fused forward) and the column pass's 128-key CTAs with 128-query steps.
constexpr int kT90 = 128;
using Fwd90 = Cfg90<2, kT90>;
static_assert(Fwd90::kRows == kT90 && Fwd90::kCols == kT90 && kCol90Keys == kT90,
              "the cache's tiles are the forward's and the column pass's blocks");

// attn_fwd_sm90 (kernels/attention/fused/fused_sm90.cuh) plus the band's stores.
template <int D, int WL, typename CT>
__global__ void __launch_bounds__(Fwd90::kThreads) diag_fwd_sm90(Params p, DiagCache c) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int R = Fwd90::kRows, N = Fwd90::kCols, NTH = Fwd90::kThreads;
  extern __shared__ unsigned char smem_raw_d90[];
  half *sq = reinterpret_cast<half *>((reinterpret_cast<uintptr_t>(smem_raw_d90) + k90Align - 1) &
                                      ~(uintptr_t)(k90Align - 1));
  half *sk0 = sq + R * D;
  half *sv0 = sk0 + 2 * N * D;

  const int qb = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z;
  const int m0 = qb * R;
  const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const long bh = (long)b * p.H + h;
  const half *qbase = p.q + (long)b * p.Lq * p.row_stride + h * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.row_stride + h * D;
  const half *vbase = p.v + (long)b * p.Lkv * p.row_stride + h * D;

  const int last_row = min(m0 + R, p.Lq) - 1;
  const int kv_end = min(p.Lkv, last_row + p.offset + 1);
  const int nblocks = (kv_end + N - 1) / N;
  const int row_l = wg * 64 + warp * 16 + g; // rows row_l and row_l + 8 of the block
  const int row_base = m0 + row_l;
  const float scale_log2 = p.scale * kLog2e;

  load_tile_sw128<R, D, NTH>(sq, qbase, p.row_stride, m0, p.Lq);
  cp_async_commit();
  load_tile_sw128<N, D, NTH>(sk0, kbase, p.row_stride, 0, p.Lkv);
  load_tile_sw128<N, D, NTH>(sv0, vbase, p.row_stride, 0, p.Lkv);
  cp_async_commit();
  if (nblocks > 1) {
    load_tile_sw128<N, D, NTH>(sk0 + N * D, kbase, p.row_stride, N, p.Lkv);
    load_tile_sw128<N, D, NTH>(sv0 + N * D, vbase, p.row_stride, N, p.Lkv);
  }
  cp_async_commit();

  float o[D / 8][4];
  frag_zero(o);
  RowState st;
  st.init();
  const uint32_t v_lbo = N * 128, v_sbo = 1024; // as attn_fwd_sm90 (V is MN-major)

  for (int n = 0; n < nblocks; n++) {
    cp_async_wait<1>();
    fence_proxy_async();
    __syncthreads();
    const half *sk = sk0 + (n & 1) * N * D;
    const half *sv = sv0 + (n & 1) * N * D;

    float s[N / 8][4];
    wgmma_abt<D, N, R>(s, sq, wg * 64, sk);

    const int j0 = n * N;
    const bool edge = j0 + N - 1 > m0 + p.offset || j0 + N > p.Lkv;
#pragma unroll
    for (int nt = 0; nt < N / 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        float x = score_log2<WL>(s[nt][e], scale_log2);
        if (edge) {
          int row = row_base + (e >> 1) * 8, col = j0 + nt * 8 + 2 * t + (e & 1);
          if (col > row + p.offset || col >= p.Lkv) x = -CUDART_INF_F;
        }
        s[nt][e] = x;
      }
    float alpha[2];
    st.update<N / 8>(s, alpha);
    if (diag_in_band(qb, n, c.k))
      diag_store<kT90, CT>(c, bh * c.tph + diag_slot(qb, n, c.k), s, st, row_l, t);
    frag_scale_rows(o, alpha);
    uint32_t pa[N / 16][4];
    frag_pack_a(pa, s);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < N / 16; kk++)
      wgmma_rs_tb<D>(o, pa[kk], sw128_desc(sv + kk * 16 * 64, v_lbo, v_sbo));
    wgmma_commit();
    wgmma_wait<0>();

    __syncthreads();
    if (n + 2 < nblocks) {
      load_tile_sw128<N, D, NTH>(sk0 + (n & 1) * N * D, kbase, p.row_stride, (n + 2) * N, p.Lkv);
      load_tile_sw128<N, D, NTH>(sv0 + (n & 1) * N * D, vbase, p.row_stride, (n + 2) * N, p.Lkv);
    }
    cp_async_commit();
  }

  st.finish();
#pragma unroll
  for (int rr = 0; rr < 2; rr++) {
    int row = row_base + rr * 8;
    if (row >= p.Lq) continue;
    float inv = 1.f / st.l[rr];
    half *dst = p.out + ((long)b * p.Lq + row) * p.row_stride + h * D;
#pragma unroll
    for (int dt = 0; dt < D / 8; dt++)
      *reinterpret_cast<__half2 *>(dst + dt * 8 + 2 * t) =
          __floats2half2_rn(o[dt][2 * rr] * inv, o[dt][2 * rr + 1] * inv);
    if (t == 0) p.lse[bh * p.Lq + row] = st.lse(rr);
  }
#else
  __trap(); // built without sm_90a: the dispatcher never launches this
#endif
}

// attn_col_sm90 for the P-only statistics (128-query steps), with the band's tiles read from
// the cache. In a cached step the stage holds no query tile: its row array holds the factors
// exp2(m - lse) instead of the LSE, and no MMA runs.
constexpr int kDiagCol90Queries = 128;
template <int D> constexpr int diag_col90_smem_bytes() {
  constexpr int QN = kDiagCol90Queries;
  return (kCol90Keys + 2 * QN) * D * (int)sizeof(half) + 2 * QN * (int)sizeof(float) + k90Align;
}

template <int D, int WL, typename CT>
__global__ void __launch_bounds__(kCol90Threads) diag_col_sm90(Params p, DiagCache c) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int QN = kDiagCol90Queries;
  static_assert(QN == kT90, "a query step is a query block");
  extern __shared__ unsigned char smem_raw_d90c[];
  half *sk = reinterpret_cast<half *>((reinterpret_cast<uintptr_t>(smem_raw_d90c) + k90Align - 1) &
                                      ~(uintptr_t)(k90Align - 1));
  half *sq0 = sk + kCol90Keys * D;
  float *srow0 = reinterpret_cast<float *>(sq0 + 2 * QN * D); // LSE, or factors when cached

  const int h = blockIdx.x, kb = blockIdx.y, b = blockIdx.z;
  const int j0 = kb * kCol90Keys;
  const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const long bh = (long)b * p.H + h;
  const half *qbase = p.q + (long)b * p.Lq * p.row_stride + h * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.row_stride + h * D;
  const float *lse = p.lse + bh * p.Lq;

  const int first_row = max(0, j0 - p.offset);
  const int qb0 = first_row / QN;
  const int nblocks = (p.Lq + QN - 1) / QN;
  const int jl_base = wg * 64 + warp * 16 + g;
  const int col_base = j0 + jl_base;
  const float scale_log2 = p.scale * kLog2e;

  auto tile_of = [&](int n) { return bh * c.tph + diag_slot(n, kb, c.k); };
  auto load_step = [&](int n, int stage) {
    float *srow = srow0 + stage * QN;
    if (diag_in_band(n, kb, c.k)) {
      if (threadIdx.x < QN) {
        const int row = n * QN + threadIdx.x;
        const float m = __ldg(c.rowmax + tile_of(n) * kT90 + threadIdx.x);
        srow[threadIdx.x] = row < p.Lq ? fast_exp2(m - __ldg(lse + row)) : 0.f;
      }
    } else {
      load_tile_sw128<QN, D, kCol90Threads>(sq0 + stage * QN * D, qbase, p.row_stride, n * QN,
                                            p.Lq);
      if (threadIdx.x < QN) {
        const int row = n * QN + threadIdx.x;
        srow[threadIdx.x] = row < p.Lq ? __ldg(lse + row) : CUDART_INF_F;
      }
    }
  };
  load_tile_sw128<kCol90Keys, D, kCol90Threads>(sk, kbase, p.row_stride, j0, p.Lkv);
  if (qb0 < nblocks) load_step(qb0, 0);
  cp_async_commit();

  ColState<WL> cs;
  for (int n = qb0; n < nblocks; n++) {
    const int stage = (n - qb0) & 1;
    cp_async_wait<0>();
    fence_proxy_async();
    __syncthreads();
    if (n + 1 < nblocks) load_step(n + 1, stage ^ 1);
    cp_async_commit();

    const float *srow = srow0 + stage * QN;
    const int i0 = n * QN;
    const bool edge =
        j0 + kCol90Keys - 1 > i0 + p.offset || i0 + QN > p.Lq || j0 + kCol90Keys > p.Lkv;
    auto live = [&](int il, int jl) {
      return !edge || (j0 + jl < p.Lkv && j0 + jl <= i0 + il + p.offset && i0 + il < p.Lq);
    };
    if (diag_in_band(n, kb, c.k)) { // uniform over the CTA
      const CT *pt = static_cast<const CT *>(c.tiles) + tile_of(n) * kT90 * kT90;
      auto factor = [&](int il) { return *reinterpret_cast<const float2 *>(srow + il); };
      diag_col_tile<kT90, CT, WL, QN / 8>(cs, pt, jl_base, t, factor, live);
      continue;
    }

    const half *sq = sq0 + stage * QN * D;
    float s[QN / 8][4];
    wgmma_abt<D, QN, kCol90Keys>(s, sk, wg * 64, sq);
#pragma unroll
    for (int nt = 0; nt < QN / 8; nt++) {
      const float2 l2 = *reinterpret_cast<const float2 *>(srow + nt * 8 + 2 * t);
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int rr = e >> 1, il = nt * 8 + 2 * t + (e & 1), jl = jl_base + rr * 8;
        const float row_lse = (e & 1) ? l2.y : l2.x;
        const float x = score_log2<WL>(s[nt][e], scale_log2);
        cs.add(rr, x, row_lse, 0.f, live(il, jl));
      }
    }
  }

  cs.store(p, bh, col_base);
#else
  __trap();
#endif
}

// ---- sm_80 ----------------------------------------------------------------------------------
// Tiles of 64: attn_fwd's 64-row blocks with 64-key steps, attn_col's 64-key CTAs with
// 64-query steps.
constexpr int kT80 = kRows;
static_assert(kRows == kCols, "the sm_80 cache's tiles are square");

// attn_fwd (kernels/attention/fused/fused_sm80.cuh) for the P-only statistics, plus the band's stores.
template <int D, int WL, typename CT>
__global__ void __launch_bounds__(kThreads) diag_fwd_sm80(Params p, DiagCache c) {
  extern __shared__ __align__(128) unsigned char smem_raw_d80[];
  half *sq = reinterpret_cast<half *>(smem_raw_d80);
  half *sk = sq + kRows * D;
  half *sv = sk + kCols * D;

  const int qb = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z;
  const int m0 = qb * kRows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const long bh = (long)b * p.H + h;
  const half *qbase = p.q + (long)b * p.Lq * p.row_stride + h * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.row_stride + h * D;
  const half *vbase = p.v + (long)b * p.Lkv * p.row_stride + h * D;

  const int last_row = min(m0 + kRows, p.Lq) - 1;
  const int kv_end = min(p.Lkv, last_row + p.offset + 1);
  const int nblocks = (kv_end + kCols - 1) / kCols;
  const int row_l = warp * 16 + g;
  const int row_base = m0 + row_l;
  const float scale_log2 = p.scale * kLog2e;

  load_tile_async<kRows, D, kThreads>(sq, qbase, p.row_stride, m0, p.Lq);
  load_tile_async<kCols, D, kThreads>(sk, kbase, p.row_stride, 0, p.Lkv);
  cp_async_commit();

  float o[D / 8][4];
  frag_zero(o);
  RowState st;
  st.init();
  uint32_t qa[D / 16][4];

  for (int n = 0; n < nblocks; n++) {
    cp_async_wait<0>();
    __syncthreads();
    if (n == 0) load_a_frags<D>(qa, sq, warp * 16);
    load_tile_async<kCols, D, kThreads>(sv, vbase, p.row_stride, n * kCols, p.Lkv);
    cp_async_commit();

    const int j0 = n * kCols;
    const bool edge = j0 + kCols - 1 > m0 + p.offset || j0 + kCols > p.Lkv;
    float s[kCols / 8][4];
    gemm_abt<D, kCols>(s, qa, sk);
#pragma unroll
    for (int nt = 0; nt < kCols / 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        float x = score_log2<WL>(s[nt][e], scale_log2);
        if (edge) {
          int row = row_base + (e >> 1) * 8, col = j0 + nt * 8 + 2 * t + (e & 1);
          if (col > row + p.offset || col >= p.Lkv) x = -CUDART_INF_F;
        }
        s[nt][e] = x;
      }
    float alpha[2];
    st.update<kCols / 8>(s, alpha);
    if (diag_in_band(qb, n, c.k))
      diag_store<kT80, CT>(c, bh * c.tph + diag_slot(qb, n, c.k), s, st, row_l, t);
    frag_scale_rows(o, alpha);

    cp_async_wait<0>();
    __syncthreads();
    if (n + 1 < nblocks) {
      load_tile_async<kCols, D, kThreads>(sk, kbase, p.row_stride, (n + 1) * kCols, p.Lkv);
      cp_async_commit();
    }
    gemm_pv<D, kCols>(o, s, sv);
  }

  st.finish();
#pragma unroll
  for (int rr = 0; rr < 2; rr++) {
    int row = row_base + rr * 8;
    if (row >= p.Lq) continue;
    float inv = 1.f / st.l[rr];
    half *dst = p.out + ((long)b * p.Lq + row) * p.row_stride + h * D;
#pragma unroll
    for (int dt = 0; dt < D / 8; dt++)
      *reinterpret_cast<__half2 *>(dst + dt * 8 + 2 * t) =
          __floats2half2_rn(o[dt][2 * rr] * inv, o[dt][2 * rr + 1] * inv);
    if (t == 0) p.lse[bh * p.Lq + row] = st.lse(rr);
  }
}

// attn_col for the P-only statistics, with the band's tiles read from the cache (the factor
// exp2(m - lse) per query computed where it is used: the sm_80 path is the fallback).
template <int D, int WL, typename CT>
__global__ void __launch_bounds__(kThreads) diag_col_sm80(Params p, DiagCache c) {
  extern __shared__ __align__(128) unsigned char smem_raw_d80c[];
  half *sk = reinterpret_cast<half *>(smem_raw_d80c);
  half *sq0 = sk + kRows * D;

  const int h = blockIdx.x, kb = blockIdx.y, b = blockIdx.z;
  const int j0 = kb * kRows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const long bh = (long)b * p.H + h;
  const half *qbase = p.q + (long)b * p.Lq * p.row_stride + h * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.row_stride + h * D;
  const float *lse = p.lse + bh * p.Lq;

  const int first_row = max(0, j0 - p.offset);
  const int qb0 = first_row / kCols;
  const int nblocks = (p.Lq + kCols - 1) / kCols;
  const int jl_base = warp * 16 + g;
  const int col_base = j0 + jl_base;
  const float scale_log2 = p.scale * kLog2e;

  // The next query tile this CTA recomputes (cached steps load nothing), from step n on.
  auto next_recomputed = [&](int n) {
    while (n < nblocks && diag_in_band(n, kb, c.k)) n++;
    return n;
  };
  load_tile_async<kRows, D, kThreads>(sk, kbase, p.row_stride, j0, p.Lkv);
  int loaded = next_recomputed(qb0); // the query tile in flight or in stage `buf`
  int buf = 0;
  if (loaded < nblocks)
    load_tile_async<kCols, D, kThreads>(sq0, qbase, p.row_stride, loaded * kCols, p.Lq);
  cp_async_commit();

  ColState<WL> cs;
  uint32_t ka[D / 16][4];
  cp_async_wait<0>();
  __syncthreads();
  load_a_frags<D>(ka, sk, warp * 16);

  for (int n = qb0; n < nblocks; n++) {
    const int i0 = n * kCols;
    const bool edge = j0 + kRows - 1 > i0 + p.offset || i0 + kCols > p.Lq || j0 + kRows > p.Lkv;
    auto live = [&](int il, int jl) {
      return !edge || (i0 + il < p.Lq && j0 + jl < p.Lkv && j0 + jl <= i0 + il + p.offset);
    };
    if (diag_in_band(n, kb, c.k)) {
      const long long tile = bh * c.tph + diag_slot(n, kb, c.k);
      const CT *pt = static_cast<const CT *>(c.tiles) + tile * kT80 * kT80;
      const float *m = c.rowmax + tile * kT80;
      auto factor = [&](int il) {
        float2 f;
        f.x = i0 + il < p.Lq ? fast_exp2(__ldg(m + il) - __ldg(lse + i0 + il)) : 0.f;
        f.y = i0 + il + 1 < p.Lq ? fast_exp2(__ldg(m + il + 1) - __ldg(lse + i0 + il + 1)) : 0.f;
        return f;
      };
      diag_col_tile<kT80, CT, WL, kCols / 8>(cs, pt, jl_base, t, factor, live);
      continue;
    }
    // n == loaded: wait for its tile, then start the next recomputed one in the other stage
    cp_async_wait<0>();
    __syncthreads();
    const half *sq = sq0 + buf * kCols * D;
    loaded = next_recomputed(n + 1);
    if (loaded < nblocks) {
      load_tile_async<kCols, D, kThreads>(sq0 + (buf ^ 1) * kCols * D, qbase, p.row_stride,
                                          loaded * kCols, p.Lq);
      cp_async_commit();
    }
    float s[kCols / 8][4];
    gemm_abt<D, kCols>(s, ka, sq);
    buf ^= 1;
#pragma unroll
    for (int nt = 0; nt < kCols / 8; nt++)
#pragma unroll
      for (int cc = 0; cc < 2; cc++) {
        const int il = nt * 8 + 2 * t + cc;
        const int row = i0 + il;
        const float row_lse = row < p.Lq ? __ldg(lse + row) : CUDART_INF_F;
#pragma unroll
        for (int rr = 0; rr < 2; rr++) {
          const int jl = jl_base + rr * 8;
          const float x = score_log2<WL>(s[nt][2 * rr + cc], scale_log2);
          cs.add(rr, x, row_lse, 0.f, live(il, jl));
        }
      }
  }

  cs.store(p, bh, col_base);
}

} // namespace fused_diag
