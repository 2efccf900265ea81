// The row and column statistics every dense pass shares (sm_80 and sm_90a, forward and column
// pass): scores in the log2 domain, the online softmax of a thread's two rows (RowState),
// KeyFormer's row sum beside it (KfRowSum), the column statistic of a thread's two keys
// (ColState), and the accumulator fragments the softmax rescales and packs for P·V.
// Their stores are the epilogue's (epilogue.cuh).
#pragma once
#include "params.cuh"

namespace fused {

// Score in the log2 domain (before the mask) from the raw dot product q·k.
template <int WL> __device__ __forceinline__ float score_log2(float qk, float scale_log2) {
  if (wl_traits<WL>::softcap)
    return (GEMMA2_SOFTCAP * kLog2e) *
           fast_tanh(qk * (scale_log2 * (1.f / (GEMMA2_SOFTCAP * kLog2e))));
  return qk * scale_log2;
}

// exp2 of a KeyFormer logit plus bias: the logit (log2 domain) is ((S - ln r) / tau) · log2 e =
// (s2 - log2 r) / tau, s2 = x · x_scale the log2 score (x a raw dot product with x_scale =
// scale_log2, or a log2 score with x_scale = 1), r its noise.
__device__ __forceinline__ float kf_exp2(float x, float x_scale, float r, float bias) {
  constexpr float kInvTau = 1.f / KF_TAU;
  return fast_exp2(fmaf(x, x_scale * kInvTau, fmaf(fast_log2(r), -kInvTau, bias)));
}

// Online-softmax state of the two rows (g and g + 8) one thread holds.
struct RowState {
  float m[2], l[2];
  __device__ void init() {
    m[0] = m[1] = -CUDART_INF_F;
    l[0] = l[1] = 0.f;
  }
  // Fold a tile of log2 scores x into the state; overwrite x with exp2(x - new max) and return
  // the factors the previous accumulators must be rescaled by.
  template <int NT> __device__ void update(float x[NT][4], float alpha[2]) {
    fold<NT, false>(x, 1.f, alpha);
  }
  // The same from raw dot products x whose log2 score is x·scale_log2 (scale_log2 > 0, masked
  // entries -inf; workloads without a softcap): the max is taken on the raw values and the
  // scale rides in the exponent's FFMA, one multiply per score less.
  template <int NT> __device__ void update_raw(float x[NT][4], float scale_log2, float alpha[2]) {
    fold<NT, true>(x, scale_log2, alpha);
  }
  // Row max as a tree and the row sum in two halves: short dependency chains, so the
  // softmax of one warp is not a chain of 2·NT dependent max and add steps.
  template <int NT, bool RAW> __device__ void fold(float x[NT][4], float scale, float alpha[2]) {
    float m_use[2];
    new_max<NT, RAW>(x, scale, m_use, alpha);
    exp_sum<NT, RAW>(x, scale, m_use, alpha);
  }
  // fold's first half: the new row maxima (m), the reference they give the exponentials
  // (m_use: 0 for a row masked so far, to avoid inf - inf) and the rescale factors.
  template <int NT, bool RAW>
  __device__ void new_max(const float x[NT][4], float scale, float m_use[2], float alpha[2]) {
#pragma unroll
    for (int rr = 0; rr < 2; rr++) {
      float v[NT];
#pragma unroll
      for (int nt = 0; nt < NT; nt++) v[nt] = fmaxf(x[nt][2 * rr], x[nt][2 * rr + 1]);
#pragma unroll
      for (int w = 1; w < NT; w *= 2)
#pragma unroll
        for (int i = 0; i + w < NT; i += 2 * w) v[i] = fmaxf(v[i], v[i + w]);
      float mx = quad_max(v[0]);
      float m_new = fmaxf(m[rr], RAW ? mx * scale : mx);
      m_use[rr] = m_new == -CUDART_INF_F ? 0.f : m_new;
      alpha[rr] = fast_exp2(m[rr] - m_use[rr]);
      m[rr] = m_new;
    }
  }
  // fold's second half: x -> exp2(x - m_use), summed into l.
  template <int NT, bool RAW>
  __device__ void exp_sum(float x[NT][4], float scale, const float m_use[2], const float alpha[2]) {
#pragma unroll
    for (int rr = 0; rr < 2; rr++) {
      float sum[2] = {0.f, 0.f};
#pragma unroll
      for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int c = 0; c < 2; c++) {
          float &e = x[nt][2 * rr + c];
          e = fast_exp2(RAW ? fmaf(e, scale, -m_use[rr]) : e - m_use[rr]);
          sum[nt & 1] += e;
        }
      l[rr] = l[rr] * alpha[rr] + (sum[0] + sum[1]); // per-thread partial; quads summed at the end
    }
  }
  __device__ void finish() {
#pragma unroll
    for (int rr = 0; rr < 2; rr++) l[rr] = quad_sum(l[rr]);
  }
  __device__ float lse(int rr) const { return m[rr] + __log2f(l[rr]); }
};

// KeyFormer's row statistic beside the softmax's (kf): per row l = Σ_j exp2(z_j - m / tau) with
// the KeyFormer log2 logits z_j = (s2_j - log2 r_j) / tau and m the softmax's running maximum
// of the log2 scores s2 (RowState::m). No maximum of its own, so no second pass over the
// scores and no second score array: the noise r >= 1 (exp_rand = 1 + |N(0,1)|) keeps every
// z_j <= m / tau, and r <= FLT_MAX keeps z_j - m / tau >= (s2_j - m) / tau - 86, so no term
// underflows that the softmax's own would not. The lse it gives (store_kf_lse, epilogue.cuh)
// is the one the column pass subtracts (log2 domain), as a max-referenced online softmax of z
// would give.
struct KfRowSum {
  float l[2];
  __device__ void init() { l[0] = l[1] = 0.f; }
  // One block: x the scores as RowState::new_max saw them (raw dot products when RAW, masked
  // -inf), m_use and alpha what it returned, noise(nt, rr) the noise of tile nt's two elements
  // in row rr; edge: the block has masked elements (their noise may be absent: zeros).
  template <int NT, bool RAW, typename Noise>
  __device__ void add(const float (&x)[NT][4], float scale_log2, const float (&m_use)[2],
                      const float (&alpha)[2], Noise noise, bool edge) {
    if (edge)
      add_block<NT, RAW, true>(x, scale_log2, m_use, alpha, noise);
    else
      add_block<NT, RAW, false>(x, scale_log2, m_use, alpha, noise);
  }
  // add for one kind of block (EDGE: test each score for the mask).
  template <int NT, bool RAW, bool EDGE, typename Noise>
  __device__ void add_block(const float (&x)[NT][4], float scale_log2, const float (&m_use)[2],
                            const float (&alpha)[2], Noise noise) {
    constexpr float kInvTau = 1.f / KF_TAU;
#pragma unroll
    for (int rr = 0; rr < 2; rr++) {
      const float ref = -m_use[rr] * kInvTau;
      float sum[2] = {0.f, 0.f};
#pragma unroll
      for (int nt = 0; nt < NT; nt++) {
        const float2 r = noise(nt, rr);
        const float rv[2] = {r.x, r.y};
#pragma unroll
        for (int c = 0; c < 2; c++) {
          const float xv = x[nt][2 * rr + c];
          const float e = kf_exp2(xv, RAW ? scale_log2 : 1.f, rv[c], ref);
          sum[nt & 1] += EDGE && xv == -CUDART_INF_F ? 0.f : e;
        }
      }
      // The softmax's rescale exp2(m_old - m_new), to the power 1/tau.
      l[rr] = l[rr] * fast_exp2(__log2f(alpha[rr]) * kInvTau) + (sum[0] + sum[1]);
    }
  }
};

// Column-pass state of the two key columns (g and g + 8) one thread holds, shared by the
// sm_80 and sm_90 column kernels (stored by store_cols, epilogue.cuh).
template <int WL> struct ColState {
  float acc[2] = {0.f, 0.f}, acc2[2] = {0.f, 0.f};
  bool hit[2] = {false, false};
  // One (query, key) element: x its log2 score, row_lse its query's LSE (of the KeyFormer
  // logits for kf), aux its noise (kf) or mask (corm) value, live false where masked.
  __device__ void add(int rr, float x, float row_lse, float aux, bool live) {
    if (wl_traits<WL>::keyformer) {
      const float v = kf_exp2(x, 1.f, aux, -row_lse);
      acc[rr] += live ? v : 0.f;
    } else if (wl_traits<WL>::any_ge_mask) {
      hit[rr] |= live && fast_exp2(x - row_lse) >= aux;
    } else {
      const float prob = live ? fast_exp2(x - row_lse) : 0.f;
      acc[rr] += prob;
      if (wl_traits<WL>::sum_sq) acc2[rr] += prob * prob;
    }
  }
  // The same from the raw dot product qk (the scale folded into the exponent's FFMA where the
  // logits are scaled scores), aux as in add.
  __device__ void add_raw(int rr, float qk, float scale_log2, float row_lse, bool live, float aux) {
    if (wl_traits<WL>::keyformer) {
      const float v = kf_exp2(qk, scale_log2, aux, -row_lse);
      acc[rr] += live ? v : 0.f; // a select: v is NaN where a masked key's noise is absent
    } else if (wl_traits<WL>::any_ge_mask) {
      hit[rr] |= live && fast_exp2(fmaf(qk, scale_log2, -row_lse)) >= aux;
    } else {
      const float x = wl_traits<WL>::softcap ? score_log2<WL>(qk, scale_log2) - row_lse
                                             : fmaf(qk, scale_log2, -row_lse);
      const float prob = live ? fast_exp2(x) : 0.f;
      acc[rr] += prob;
      if (wl_traits<WL>::sum_sq) acc2[rr] += prob * prob;
    }
  }
  // corm against a row threshold folded into row_lse (lse_i + log2 m_i, corm_rows.cuh): P >= m_i
  // is s2 - row_lse >= 0, no exponential.
  __device__ void add_raw_above(int rr, float qk, float scale_log2, float row_lse, bool live) {
    hit[rr] |= live && fmaf(qk, scale_log2, -row_lse) >= 0.f;
  }
};

// The accumulator fragments of a thread's two rows (g and g + 8): [tile][e], e 0-1 row g, 2-3
// row g + 8. Zeroed before a row block, rescaled when the row maxima move.
template <int NT> __device__ __forceinline__ void frag_zero(float (&o)[NT][4]) {
#pragma unroll
  for (int i = 0; i < NT; i++)
#pragma unroll
    for (int e = 0; e < 4; e++) o[i][e] = 0.f;
}
template <int NT>
__device__ __forceinline__ void frag_scale_rows(float (&o)[NT][4], const float (&alpha)[2]) {
#pragma unroll
  for (int i = 0; i < NT; i++) {
    o[i][0] *= alpha[0];
    o[i][1] *= alpha[0];
    o[i][2] *= alpha[1];
    o[i][3] *= alpha[1];
  }
}
// Probabilities in the accumulator layout (NT tiles of 8 keys) -> fp16 A fragments of the
// P·V product (NT / 2 k-steps of 16 keys).
template <int NT, bool BF16 = false>
__device__ __forceinline__ void frag_pack_a(uint32_t (&pa)[NT / 2][4], const float (&s)[NT][4]) {
#pragma unroll
  for (int kk = 0; kk < NT / 2; kk++) {
    pa[kk][0] = pack2<BF16>(s[2 * kk][0], s[2 * kk][1]);
    pa[kk][1] = pack2<BF16>(s[2 * kk][2], s[2 * kk][3]);
    pa[kk][2] = pack2<BF16>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    pa[kk][3] = pack2<BF16>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
  }
}

} // namespace fused
