// The fused systems' kernels on the sm_80 instruction set (mma.sync), templated on the head
// dimension D and the workload (its features: workload.h, wl_traits). Two kernels cover every
// workload:
//
//   attn_fwd : one CTA per (64-row query block, head, batch); online softmax over the causal
//              key blocks only (blocks above the diagonal are never loaded), out = P·V, and,
//              for the column-score workloads, the row log-sum-exp (log2 domain) of the
//              scores and, for kf, of the KeyFormer logits. S×S is never written.
//   attn_col : one CTA per (64-key block, head, batch); recomputes Sᵀ = K·Qᵀ for the query
//              rows at or below the diagonal, turns it into probabilities with the row LSE
//              and reduces over the queries in registers: Σ_i P (COL_SUM), Σ_i P and
//              Σ_i P² (COL_SUM_SQ), Σ_i softmax_j((S - log r)/tau) (COL_KEYFORMER),
//              any_i P >= mask (COL_ANY_GE_MASK).
//              Each key column is owned by one CTA: no atomics, deterministic sums.
//
// Every forward and column pass takes a tile cache policy (`Cache`): NoTileCache for `fused`,
// whose hooks compile to nothing; fused-diag's DiagCache (fused_diag/diag_cache.cuh), which
// has the forward store the exponentials of the score tiles near the diagonal and the column
// pass read them instead of recomputing those tiles.
#pragma once
#include "attn_system.h"
#include "gpu_util.cuh"
#include "mma_sm80.cuh"

#include <math_constants.h>

namespace fused {

struct Params {
  const half *q, *k, *v;
  half *out;
  const float *exp_rand;  // kf: [B, H, Lq, Lkv]
  const float *corm_mask; // corm: [Lq, Lkv]
  float *lse;             // [B, H, Lq], log2 domain
  float *lse_kf;          // [B, H, Lq], log2 domain (kf)
  float *col;             // [B, H, Lkv]
  float *col2;            // [B, H, Lkv] (roco)
  uint8_t *flags;         // [B, H, Lkv] (corm)
  int B, H, Lq, Lkv;
  int Hkv, hpg;       // K/V heads; query heads per K/V head (GQA: query head h reads h / hpg)
  int offset;         // Lkv - Lq: (i, j) is masked when j > i + offset
  float scale;        // 1 / sqrt(D)
  long row_stride;    // H * D: halves between consecutive tokens of one head of q and out
  long kv_row_stride; // Hkv * D: the same for k and v
  int noise_drawn;    // kf on the Hopper kernels: the noise is kf_draw.h's draw of `noise`, drawn
  kf_draw noise;      // where it is read (exp_rand unused)
};

// A column CTA's query blocks under GQA: for each of K/V head hkv's hpg query heads in turn, the
// query blocks from qb0 on (the ones at or below the causal diagonal of the CTA's keys). Block 0
// is query block qb0 of query head first_head(); advance() steps to the next.
struct GroupBlocks {
  int hkv, hpg, qb0, per_head;
  __device__ int count() const { return per_head * hpg; }
  __device__ int first_head() const { return hkv * hpg; }
  // The group's blocks in order without a division: (h, n) of block k to those of block k + 1.
  __device__ void advance(int &h, int &n) const {
    if (++n == qb0 + per_head) {
      n = qb0;
      h++;
    }
  }
};
__device__ __forceinline__ GroupBlocks group_blocks(int hkv, const Params &p, int first_row,
                                                    int rows_per_block) {
  const int qb0 = first_row / rows_per_block,
            nblocks = (p.Lq + rows_per_block - 1) / rows_per_block;
  return {hkv, p.hpg, qb0, max(0, nblocks - qb0)};
}

// The tile cache policy of `fused`: no tile is cached (kOn false: the kernels' cache code is
// compiled out).
struct NoTileCache {
  static constexpr bool kOn = false;
  __device__ bool in_band(int, int) const { return false; }
};

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRows = kWarps * 16; // query rows per attn_fwd CTA, key rows per attn_col CTA
constexpr int kCols = 64;          // key columns per attn_fwd step, query columns per attn_col step
constexpr int kFwdAuxPitch = kCols + 8; // floats; float2 reads of a half-warp hit distinct banks
constexpr int kColAuxPitch = kRows + 4; // floats; scalar reads of a warp hit distinct banks
constexpr float kLog2e = 1.4426950408889634f;

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

template <int WL> __host__ __device__ constexpr bool needs_lse() {
  return wl_traits<WL>::column_pass;
}
// Workloads whose second pass reads an fp32 S×S input (kf's noise, corm's mask).
template <int WL> __host__ __device__ constexpr bool has_aux() {
  return wl_traits<WL>::keyformer || wl_traits<WL>::any_ge_mask;
}

template <int D, int WL> constexpr int fwd_smem_bytes() {
  return (kRows + 2 * kCols) * D * (int)sizeof(half) +
         (wl_traits<WL>::keyformer ? kRows * kFwdAuxPitch * (int)sizeof(float) : 0);
}
template <int D, int WL> constexpr int col_smem_bytes() {
  return (kRows + 2 * kCols) * D * (int)sizeof(half) +
         (has_aux<WL>() ? 2 * kCols * kColAuxPitch * (int)sizeof(float) : 0);
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
// underflows that the softmax's own would not. The lse it gives is the one the column pass
// subtracts (log2 domain), as a max-referenced online softmax of z would give.
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
  // After the last block: the rows' lse_kf (log2 domain), st the finished softmax state.
  __device__ void store(const RowState &st, const Params &p, long bh, int row_base, int t) {
#pragma unroll
    for (int rr = 0; rr < 2; rr++) {
      const float l_row = quad_sum(l[rr]);
      const int row = row_base + rr * 8;
      if (t == 0 && row < p.Lq)
        p.lse_kf[bh * p.Lq + row] = st.m[rr] * (1.f / KF_TAU) + __log2f(l_row);
    }
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

// Block j0's raw q·k (accumulator layout, rows row_base and row_base + 8 of this thread) ->
// masked log2 scores in place (SCALE false: masked raw scores, for RowState::update_raw).
// edge: the block crosses the diagonal or the end of the keys.
template <int WL, int NT, bool SCALE = true>
__device__ __forceinline__ void mask_scores(float (&s)[NT][4], const Params &p, int row_base,
                                            int j0, bool edge, float scale_log2, int t) {
  if (!SCALE && !edge) return;
#pragma unroll
  for (int nt = 0; nt < NT; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) {
      float x = SCALE ? score_log2<WL>(s[nt][e], scale_log2) : s[nt][e];
      if (edge) {
        int row = row_base + (e >> 1) * 8, col = j0 + nt * 8 + 2 * t + (e & 1);
        if (col > row + p.offset || col >= p.Lkv) x = -CUDART_INF_F;
      }
      s[nt][e] = x;
    }
}

// Softcapped scores for RowState::update_raw: s <- tanh(qk · scale / cap) (the log2 score is
// that times cap · log2 e, which update_raw's exponent FFMA applies), masked entries -inf.
// tanh.approx (MUFU) for every score: a polynomial on the FMA pipe instead measured slower at
// every head dim (PERF-fused.md).
template <int WL, int NT>
__device__ __forceinline__ void softcap_scores(float (&s)[NT][4], const Params &p, int row_base,
                                               int j0, bool edge, float scale_log2, int t) {
  const float c1 = scale_log2 * (1.f / (GEMMA2_SOFTCAP * kLog2e)); // scale / cap
#pragma unroll
  for (int nt = 0; nt < NT; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) s[nt][e] = fast_tanh(s[nt][e] * c1);
  if (edge) mask_scores<WL, NT, false>(s, p, row_base, j0, true, 0.f, t); // mask only
}

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

// Column-pass state of the two key columns (g and g + 8) one thread holds, shared by the
// sm_80 and sm_90 column kernels.
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
  // Reduce over the quad (the threads holding the same keys) and write keys col_base and
  // col_base + 8 of row bh.
  __device__ void store(const Params &p, long bh, int col_base) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int rr = 0; rr < 2; rr++) {
      const float a = quad_sum(acc[rr]);
      const float a2 = quad_sum(acc2[rr]);
      const unsigned hits = __ballot_sync(0xffffffff, hit[rr]);
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
};

// BF16: bfloat16 q, k, v, out (the tiles' 16-bit elements read as bf16), else fp16. Cache: the
// tile cache policy (kOn: the exponentials of the band's 64 x 64 tiles go to it).
template <int D, int WL, bool BF16 = false, typename Cache = NoTileCache>
__global__ void __launch_bounds__(kThreads) attn_fwd(Params p, Cache cache) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  half *sq = reinterpret_cast<half *>(smem_raw);
  half *sk = sq + kRows * D;
  half *sv = sk + kCols * D;
  float *saux = reinterpret_cast<float *>(sv + kCols * D); // kf noise tile [kRows][kFwdAuxPitch]

  const int qb = gridDim.x - 1 - blockIdx.x; // longest causal rows first
  const int h = blockIdx.y, b = blockIdx.z;
  const int m0 = qb * kRows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const long bh = (long)b * p.H + h;
  const half *qbase = p.q + (long)b * p.Lq * p.row_stride + h * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.kv_row_stride + h / p.hpg * D;
  const half *vbase = p.v + (long)b * p.Lkv * p.kv_row_stride + h / p.hpg * D;
  const float *rbase = wl_traits<WL>::keyformer ? p.exp_rand + bh * p.Lq * p.Lkv : nullptr;
  const bool vec4 = (p.Lkv & 3) == 0;

  const int last_row = min(m0 + kRows, p.Lq) - 1;
  const int kv_end = min(p.Lkv, last_row + p.offset + 1);
  const int nblocks = (kv_end + kCols - 1) / kCols;
  const int row_base = m0 + warp * 16 + g; // this thread's rows: row_base and row_base + 8
  const float scale_log2 = p.scale * kLog2e;

  load_tile_async<kRows, D, kThreads>(sq, qbase, p.row_stride, m0, p.Lq);
  load_tile_async<kCols, D, kThreads>(sk, kbase, p.kv_row_stride, 0, p.Lkv);
  if (wl_traits<WL>::keyformer)
    load_ftile_async<kRows, kCols, kFwdAuxPitch, kThreads>(saux, rbase, p.Lkv, m0, p.Lq, 0, p.Lkv,
                                                           vec4);
  cp_async_commit();

  float o[D / 8][4];
  frag_zero(o);
  RowState st;
  KfRowSum st_kf;
  st.init();
  st_kf.init();
  uint32_t qa[D / 16][4];

  for (int n = 0; n < nblocks; n++) {
    cp_async_wait<0>();
    __syncthreads(); // K (and the kf noise) of block n ready
    if (n == 0) load_a_frags<D>(qa, sq, warp * 16);
    load_tile_async<kCols, D, kThreads>(sv, vbase, p.kv_row_stride, n * kCols, p.Lkv);
    cp_async_commit();

    const int j0 = n * kCols;
    const bool edge = j0 + kCols - 1 > m0 + p.offset || j0 + kCols > p.Lkv;
    float s[kCols / 8][4];
    gemm_abt<D, kCols, BF16>(s, qa, sk);
    mask_scores<WL>(s, p, row_base, j0, edge, scale_log2, t);
    float alpha[2];
    if constexpr (wl_traits<WL>::keyformer) {
      float m_use[2];
      st.new_max<kCols / 8, false>(s, 1.f, m_use, alpha);
      auto noise = [&](int nt, int rr) {
        return *reinterpret_cast<const float2 *>(saux + (warp * 16 + g + rr * 8) * kFwdAuxPitch +
                                                 nt * 8 + 2 * t);
      };
      st_kf.add<kCols / 8, false>(s, scale_log2, m_use, alpha, noise, edge);
      st.exp_sum<kCols / 8, false>(s, 1.f, m_use, alpha);
    } else {
      st.update<kCols / 8>(s, alpha);
    }
    if constexpr (Cache::kOn)
      if (cache.in_band(qb, n))
        cache.template store<kRows>(cache.tile(bh, qb, n), s, st, warp * 16 + g, t);
    frag_scale_rows(o, alpha);

    cp_async_wait<0>();
    __syncthreads(); // V ready; every warp is done reading K and the noise tile
    if (n + 1 < nblocks) {
      load_tile_async<kCols, D, kThreads>(sk, kbase, p.kv_row_stride, (n + 1) * kCols, p.Lkv);
      if (wl_traits<WL>::keyformer)
        load_ftile_async<kRows, kCols, kFwdAuxPitch, kThreads>(saux, rbase, p.Lkv, m0, p.Lq,
                                                               (n + 1) * kCols, p.Lkv, vec4);
      cp_async_commit();
    }
    gemm_pv<D, kCols, BF16>(o, s, sv);
  }

  st.finish();
  store_rows<D, WL, BF16>(o, st, p, row_base, b, h, t);
  if constexpr (wl_traits<WL>::keyformer) st_kf.store(st, p, bh, row_base, t);
}

// Grid: (K/V heads, key blocks, batch). Heads vary fastest so the CTAs resident at one time work
// on the same key columns of different heads and share corm's mask tiles in L2. Under GQA a CTA
// owns its key columns for every query head of the group: it sums the group's heads' query
// blocks one after another (the statistic per K/V head), K loaded once.
// BF16: bfloat16 q and k, else fp16. Cache: the tile cache policy (kOn: the band's tiles come
// from it; their query tiles are loaded all the same, which keeps the pipeline uniform; one K/V
// head per query head, fused-diag's supports says so).
template <int D, int WL, bool BF16 = false, typename Cache = NoTileCache>
__global__ void __launch_bounds__(kThreads) attn_col(Params p, Cache cache) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  half *sk = reinterpret_cast<half *>(smem_raw);
  half *sq0 = sk + kRows * D;                                    // two query tiles, double-buffered
  float *saux0 = reinterpret_cast<float *>(sq0 + 2 * kCols * D); // two [kCols][kColAuxPitch] tiles

  const int hkv = blockIdx.x, kb = blockIdx.y, b = blockIdx.z;
  const int j0 = kb * kRows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const half *kbase = p.k + (long)b * p.Lkv * p.kv_row_stride + hkv * D;
  const bool vec4 = (p.Lkv & 3) == 0;
  // Query head h's (batch b) inputs: its Q rows, its row LSE, its aux matrix (kf's noise is per
  // (batch, head); corm's mask is one [Lq, Lkv] matrix for all).
  auto qbase = [&](int h) { return p.q + (long)b * p.Lq * p.row_stride + h * D; };
  auto lse_of = [&](int h) {
    return (wl_traits<WL>::keyformer ? p.lse_kf : p.lse) + ((long)b * p.H + h) * p.Lq;
  };
  auto abase = [&](int h) {
    return wl_traits<WL>::keyformer ? p.exp_rand + ((long)b * p.H + h) * p.Lq * p.Lkv : p.corm_mask;
  };

  const GroupBlocks blocks = group_blocks(hkv, p, max(0, j0 - p.offset), kCols);
  const int count = blocks.count();
  const int col_base = j0 + warp * 16 + g; // this thread's key columns: col_base, col_base + 8
  const float scale_log2 = p.scale * kLog2e;
  auto load_block = [&](int h, int n, int buf) { // query block n of head h
    load_tile_async<kCols, D, kThreads>(sq0 + buf * kCols * D, qbase(h), p.row_stride, n * kCols,
                                        p.Lq);
    if (has_aux<WL>())
      load_ftile_async<kCols, kRows, kColAuxPitch, kThreads>(
          saux0 + buf * kCols * kColAuxPitch, abase(h), p.Lkv, n * kCols, p.Lq, j0, p.Lkv, vec4);
  };

  load_tile_async<kRows, D, kThreads>(sk, kbase, p.kv_row_stride, j0, p.Lkv);
  int h = blocks.first_head(), n = blocks.qb0; // block k's head and query block
  int h_next = h, n_next = n;                  // block k + 1's
  blocks.advance(h_next, n_next);
  if (count > 0) load_block(h, n, 0);
  cp_async_commit();

  ColState<WL> cs;
  uint32_t ka[D / 16][4];

  for (int k = 0; k < count; k++, h = h_next, n = n_next, blocks.advance(h_next, n_next)) {
    const int buf = k & 1;
    const long bh = (long)b * p.H + h;
    const float *lse = lse_of(h);
    cp_async_wait<0>();
    __syncthreads();
    if (k == 0) load_a_frags<D>(ka, sk, warp * 16);
    if (k + 1 < count) {
      load_block(h_next, n_next, buf ^ 1);
      cp_async_commit();
    }
    const float *aux = saux0 + buf * kCols * kColAuxPitch;
    const int i0 = n * kCols;
    // Tiles crossing the diagonal or the ends need the element mask; the rest are all live.
    const bool edge = j0 + kRows - 1 > i0 + p.offset || i0 + kCols > p.Lq || j0 + kRows > p.Lkv;
    if constexpr (Cache::kOn) {
      if (cache.in_band(n, kb)) { // uniform over the CTA
        auto live = [&](int il, int jl) {
          return !edge || (i0 + il < p.Lq && j0 + jl < p.Lkv && j0 + jl <= i0 + il + p.offset);
        };
        // exp2(m - lse) of queries il and il + 1 (0 past Lq)
        auto factor = [&](int, int il, float2 m) {
          float2 f;
          f.x = i0 + il < p.Lq ? fast_exp2(m.x - __ldg(lse + i0 + il)) : 0.f;
          f.y = i0 + il + 1 < p.Lq ? fast_exp2(m.y - __ldg(lse + i0 + il + 1)) : 0.f;
          return f;
        };
        cache.template add_tile<kRows, kCols / 8>(cs, cache.tile(bh, n, kb), warp * 16 + g, t,
                                                  factor, live);
        continue;
      }
    }
    float s[kCols / 8][4];
    gemm_abt<D, kCols, BF16>(s, ka, sq0 + buf * kCols * D);
#pragma unroll
    for (int nt = 0; nt < kCols / 8; nt++)
#pragma unroll
      for (int c = 0; c < 2; c++) {
        const int il = nt * 8 + 2 * t + c; // query index within the tile
        const int row = i0 + il;
        const float row_lse = row < p.Lq ? __ldg(lse + row) : CUDART_INF_F;
#pragma unroll
        for (int rr = 0; rr < 2; rr++) {
          const int jl = warp * 16 + g + rr * 8; // key index within the tile
          const int col = j0 + jl;
          const bool live = !edge || (row < p.Lq && col < p.Lkv && col <= row + p.offset);
          const float x = score_log2<WL>(s[nt][2 * rr + c], scale_log2);
          cs.add(rr, x, row_lse, has_aux<WL>() ? aux[il * kColAuxPitch + jl] : 0.f, live);
        }
      }
  }

  cs.store(p, (long)b * p.Hkv + hkv, col_base);
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
