// corm's column pass without its mask's tiles, where the mask allows it. corm's statistic is
// any_i P[i,j] >= mask[i][j]; where the mask is constant along each row's live keys (m_i for
// every j <= i + offset, as CoRM's own threshold 1/(i+1) is), P[i,j] >= m_i is
// s2_ij - lse'_i >= 0 with lse'_i = lse_i + log2 m_i (-inf for m_i <= 0: every live key
// counts), so the column pass runs as h2o's does (128-query steps, no aux stage) against lse',
// with a compare where h2o takes an exponential.
// Every call checks the mask first (one read of its live half, shared by all heads), then
// launches both column passes; each reads the check's count of varying rows and the one whose
// case does not hold ends at once (col_ws90.cuh). Exact for every mask: a varying row sends the
// call to the staged-mask pass.
#pragma once
#include "params.cuh"

namespace fused {

constexpr int kCormRowsWarps = 8;
// static kernels: each translation unit including this header (fused.cu, fused_diag.cu) has
// its own.

// grid ceil(Lq / kCormRowsWarps), a warp a row: thr[i] = mask[i][0], and *varied counts the
// rows whose live keys do not all hold that value (NaN never equals itself: a NaN row varies).
static __global__ void corm_rows_check(const float *mask, int Lq, int Lkv, int offset, float *thr,
                                       int *varied) {
  const int i = blockIdx.x * kCormRowsWarps + (int)(threadIdx.x >> 5), lane = threadIdx.x & 31;
  if (i >= Lq) return;
  const float *row = mask + (size_t)i * Lkv;
  const int last = min(Lkv - 1, i + offset); // row i's live keys: 0 .. last
  const float m0 = row[0];
  bool same = true;
  for (int j = lane; j <= last; j += 32) same &= row[j] == m0;
  same = __all_sync(0xffffffffu, same);
  if (lane == 0) {
    thr[i] = m0;
    if (!same) atomicAdd(varied, 1);
  }
}

// lse_rows[r] = lse[r] + log2 thr[i] for the n rows r (query i = r % Lq) of every (batch, head).
static __global__ void corm_rows_lse(const float *lse, const float *thr, float *lse_rows, long n,
                                     int Lq) {
  const long r = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (r >= n) return;
  const float m = thr[r % Lq];
  lse_rows[r] = m > 0.f ? lse[r] + __log2f(m) : -CUDART_INF_F;
}

} // namespace fused
