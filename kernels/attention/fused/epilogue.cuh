// The dense passes' outputs: the forward's rows (out = O / l and the row LSE), kf's row LSE of
// the KeyFormer logits, the column pass's per-key statistic, and the pool that follows it for
// the pooled workloads. Shared by the sm_80 and sm_90a kernels.
#pragma once
#include "softmax.cuh"

namespace fused {

// The forward's epilogue: out = o / l (fp16) for this thread's two rows, and the row LSE
// where a column pass follows. A thread holds 4 bytes of each 8-column group of its row; the
// quad's lanes t and t ^ 1 swap one of every two groups' pairs, so each stores 8 contiguous
// bytes and a warp's store fills whole 32-byte sectors (4-byte stores would write each sector
// in two halves: twice the stores and the L2 write sectors). Every lane of the warp must call it
// (the shuffles); rows past Lq are not stored.
template <int D, int WL, bool BF16 = false>
__device__ __forceinline__ void store_rows(const float (&o)[D / 8][4], const RowState &st,
                                           const Params &p, int row_base, int b, int h, int t) {
  static_assert(D % 16 == 0, "store_rows pairs 8-column groups");
  const long bh = (long)b * p.H + h;
  const bool odd = t & 1;
#pragma unroll
  for (int rr = 0; rr < 2; rr++) {
    const int row = row_base + rr * 8;
    const float inv = 1.f / st.l[rr];
    half *dst = p.out + ((long)b * p.Lq + row) * p.row_stride + h * D + 2 * (t & ~1);
#pragma unroll
    for (int k = 0; k < D / 16; k++) {
      const uint32_t even_grp = pack2<BF16>(o[2 * k][2 * rr] * inv, o[2 * k][2 * rr + 1] * inv);
      const uint32_t odd_grp =
          pack2<BF16>(o[2 * k + 1][2 * rr] * inv, o[2 * k + 1][2 * rr + 1] * inv);
      // an even lane keeps group 2k and takes its partner's pair of it; an odd lane group 2k+1
      const uint32_t got = __shfl_xor_sync(0xffffffffu, odd ? even_grp : odd_grp, 1);
      const uint2 v = odd ? make_uint2(got, odd_grp) : make_uint2(even_grp, got);
      if (row < p.Lq) *reinterpret_cast<uint2 *>(dst + 16 * k + 8 * odd) = v;
    }
    if (needs_lse<WL>() && t == 0 && row < p.Lq) p.lse[bh * p.Lq + row] = st.lse(rr);
  }
}

// After the last block: the rows' lse_kf (log2 domain) from kf's sum, st the finished softmax
// state.
__device__ __forceinline__ void store_kf_lse(const KfRowSum &kf, const RowState &st,
                                             const Params &p, long bh, int row_base, int t) {
#pragma unroll
  for (int rr = 0; rr < 2; rr++) {
    const float l_row = quad_sum(kf.l[rr]);
    const int row = row_base + rr * 8;
    if (t == 0 && row < p.Lq)
      p.lse_kf[bh * p.Lq + row] = st.m[rr] * (1.f / KF_TAU) + __log2f(l_row);
  }
}

// The column pass's epilogue: reduce over the quad (the threads holding the same keys) and
// write keys col_base and col_base + 8 of row bh.
template <int WL>
__device__ __forceinline__ void store_cols(const ColState<WL> &cs, const Params &p, long bh,
                                           int col_base) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int rr = 0; rr < 2; rr++) {
    const float a = quad_sum(cs.acc[rr]);
    const float a2 = quad_sum(cs.acc2[rr]);
    const unsigned hits = __ballot_sync(0xffffffff, cs.hit[rr]);
    const int col = col_base + rr * 8;
    if ((lane & 3) != 0 || col >= p.Lkv) continue;
    const long idx = bh * p.Lkv + col;
    if (wl_traits<WL>::any_ge_mask) {
      p.flags[idx] = ((hits >> lane) & 0xfu) != 0; // any of this quad's four lanes
    } else {
      p.col[idx] = a;
      if (wl_traits<WL>::sum_sq) p.col2[idx] = a2;
    }
  }
}

// score[j] = (col[j-w/2] + ... + col[j+w/2]) / w, zero padding counted in the divisor.
// static: every translation unit including this header (fused.cu, fused_diag.cu) has its own.
static __global__ void pool_avg(const float *col, float *score, int rows, int len, int w) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long)rows * len) return;
  int j = (int)(i % len);
  const float *c = col + (i - j);
  float sum = 0.f;
  for (int d = -w / 2; d <= w / 2; d++) {
    int jj = j + d;
    if (jj >= 0 && jj < len) sum += c[jj];
  }
  score[i] = sum / w;
}

} // namespace fused
