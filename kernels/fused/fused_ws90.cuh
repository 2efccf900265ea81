// The warp-specialized sm_90a forward (v9, fused's default on Hopper): the online-softmax forward of
// attn_fwd_sm90 restructured the way Hopper wants it.
//
//   warpgroup 0  producer: one thread issues TMA loads (tensor maps, 128B swizzle) of the Q
//                tile once and of K and V per 128-key block into an NST-stage ring; a K and a
//                V "full" mbarrier per stage (transaction bytes), one "empty" mbarrier per
//                stage that the consumers arrive on when they are done with it. It gives its
//                registers away (setmaxnreg.dec).
//   warpgroups 1, 2  consumers: 64 query rows each (setmaxnreg.inc). Per block n a consumer
//                issues S_n = Q·K_nᵀ and O += P_{n-1}·V_{n-1} back to back (both async), then
//                runs the softmax of S_n while P_{n-1}·V_{n-1} is still on the tensor cores
//                (intra-warpgroup overlap). The two consumers take turns issuing through two
//                named barriers (ping-pong), so one's softmax runs under the other's GEMMs.
// No block-wide barrier after the prologue: the producer and the consumers only meet at
// mbarriers. Same math, mask and outputs (out, row LSE) as attn_fwd_sm90; every workload but
// COL_KEYFORMER.
#pragma once
#include "fused_sm90.cuh"
#include "sm90_async.cuh" // mbarriers, TMA, named barriers, setmaxnreg

#include <cuda.h> // CUtensorMap (the maps are encoded on the host, fused.cu)

namespace fused {

constexpr int kWsRows = 128;    // query rows per CTA: two consumer warpgroups of 64
constexpr int kWsCols = 128;    // keys per stage
constexpr int kWsThreads = 384; // producer warpgroup + two consumer warpgroups
constexpr int kWsSchedBar = 1;  // named barriers 1, 2: the consumers' turns (0 is __syncthreads)
template <int D> constexpr int ws_stages() { return D == 64 ? 4 : 2; }
template <int D> constexpr int ws_smem_bytes() {
  return (kWsRows + 2 * ws_stages<D>() * kWsCols) * D * (int)sizeof(half) + k90Align +
         (1 + 3 * ws_stages<D>()) * 8;
}

// TMA descriptors of q, k, v as 4-D tensors {D, H, L, B} (boxes {64, 1, rows, 1}).
struct WsMaps {
  CUtensorMap q, k, v;
};

// ---- the kernel ---------------------------------------------------------------------------
template <int D, int WL>
__global__ void __launch_bounds__(kWsThreads, 1)
    attn_fwd_ws90(const __grid_constant__ WsMaps maps, Params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int NST = ws_stages<D>();
  constexpr uint32_t kStageBytes = kWsCols * D * (uint32_t)sizeof(half);
  extern __shared__ unsigned char smem_ws[];
  half *sq = reinterpret_cast<half *>((reinterpret_cast<uintptr_t>(smem_ws) + k90Align - 1) &
                                      ~(uintptr_t)(k90Align - 1));
  half *sk0 = sq + kWsRows * D;
  half *sv0 = sk0 + NST * kWsCols * D;
  uint64_t *full_q = reinterpret_cast<uint64_t *>(sv0 + NST * kWsCols * D);
  uint64_t *full_k = full_q + 1, *full_v = full_k + NST, *empty = full_v + NST;

  const int qb = gridDim.x - 1 - blockIdx.x; // heaviest causal blocks first
  const int h = blockIdx.y, b = blockIdx.z;
  const int m0 = qb * kWsRows;
  const int last_row = min(m0 + kWsRows, p.Lq) - 1;
  const int kv_end = min(p.Lkv, last_row + p.offset + 1);
  const int nblocks = (kv_end + kWsCols - 1) / kWsCols;
  const int wg = threadIdx.x >> 7;

  if (threadIdx.x == 0) {
    mbar_init(full_q, 1);
    for (int s = 0; s < NST; s++) {
      mbar_init(&full_k[s], 1);
      mbar_init(&full_v[s], 1);
      mbar_init(&empty[s], 2 * 128); // every consumer thread arrives once per block
    }
    mbar_fence_init();
  }
  __syncthreads();

  if (wg == 0) { // ---- producer ----
    regs_release<40>();
    if (threadIdx.x != 0) return;
    mbar_expect_tx(full_q, kWsRows * D * (uint32_t)sizeof(half));
    for (int sl = 0; sl < D / 64; sl++)
      tma_load_4d(sq + sl * kWsRows * 64, &maps.q, full_q, sl * 64, h, m0, b);
    for (int n = 0; n < nblocks; n++) {
      const int st = n % NST;
      mbar_wait(&empty[st], ((n / NST) & 1) ^ 1); // the first round passes at once
      half *sk = sk0 + st * kWsCols * D, *sv = sv0 + st * kWsCols * D;
      mbar_expect_tx(&full_k[st], kStageBytes);
      for (int sl = 0; sl < D / 64; sl++)
        tma_load_4d(sk + sl * kWsCols * 64, &maps.k, &full_k[st], sl * 64, h, n * kWsCols, b);
      mbar_expect_tx(&full_v[st], kStageBytes);
      for (int sl = 0; sl < D / 64; sl++)
        tma_load_4d(sv + sl * kWsCols * 64, &maps.v, &full_v[st], sl * 64, h, n * kWsCols, b);
    }
    return;
  }

  // ---- consumers ----
  regs_claim<232>();
  const int c = wg - 1; // 0 or 1: rows m0 + 64 c ..
  const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const int row_base = m0 + c * 64 + warp * 16 + g; // rows row_base and row_base + 8
  const int wg_row0 = m0 + c * 64;
  const float scale_log2 = p.scale * kLog2e;
  const uint32_t v_lbo = kWsCols * 128, v_sbo = 1024; // V as MN-major B (see attn_fwd_sm90)

  float o[D / 8][4];
#pragma unroll
  for (int dt = 0; dt < D / 8; dt++)
#pragma unroll
    for (int e = 0; e < 4; e++) o[dt][e] = 0.f;
  RowState st;
  st.init();
  float s[kWsCols / 8][4];
  uint32_t pa[kWsCols / 16][4];

  if (c == 1) named_arrive(kWsSchedBar, 256); // consumer 0 takes the first turn
  mbar_wait(full_q, 0);

  // Block n's scores in s -> masked log2 scores -> probabilities (s) and the rescale factors.
  auto softmax_block = [&](int n, float(&alpha)[2]) {
    const int j0 = n * kWsCols;
    const bool edge = j0 + kWsCols - 1 > wg_row0 + p.offset || j0 + kWsCols > p.Lkv;
    mask_scores<WL>(s, p, row_base, j0, edge, scale_log2, t);
    st.update<kWsCols / 8>(s, alpha);
  };
  auto rescale_and_pack = [&](const float(&alpha)[2]) {
#pragma unroll
    for (int dt = 0; dt < D / 8; dt++) {
      o[dt][0] *= alpha[0];
      o[dt][1] *= alpha[0];
      o[dt][2] *= alpha[1];
      o[dt][3] *= alpha[1];
    }
#pragma unroll
    for (int kk = 0; kk < kWsCols / 16; kk++) {
      pa[kk][0] = pack_half2(s[2 * kk][0], s[2 * kk][1]);
      pa[kk][1] = pack_half2(s[2 * kk][2], s[2 * kk][3]);
      pa[kk][2] = pack_half2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pa[kk][3] = pack_half2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
  };
  auto issue_pv = [&](int stage) {
    const half *sv = sv0 + stage * kWsCols * D;
#pragma unroll
    for (int kk = 0; kk < kWsCols / 16; kk++)
      wgmma_rs_tb<D>(o, pa[kk], sw128_desc(sv + kk * 16 * 64, v_lbo, v_sbo));
  };
  // consumer 1 leaves its last turn unused: consumer 0 has no GEMM left to issue then
  auto pass_turn = [&](int n) {
    if (!(c == 1 && n == nblocks - 1)) named_arrive(kWsSchedBar + (1 - c), 256);
  };

  { // block 0: S_0 only
    float alpha[2];
    mbar_wait(&full_k[0], 0);
    named_sync(kWsSchedBar + c, 256);
    wgmma_fence();
    wgmma_abt_issue<D, kWsCols, kWsRows>(s, sq, c * 64, sk0);
    wgmma_commit();
    pass_turn(0);
    wgmma_wait<0>();
    softmax_block(0, alpha);
    rescale_and_pack(alpha);
  }
  for (int n = 1; n < nblocks; n++) {
    const int stage = n % NST, prev = (n - 1) % NST;
    float alpha[2];
    mbar_wait(&full_k[stage], (n / NST) & 1);
    mbar_wait(&full_v[prev], ((n - 1) / NST) & 1);
    named_sync(kWsSchedBar + c, 256); // my turn to issue
    wgmma_fence();
    wgmma_abt_issue<D, kWsCols, kWsRows>(s, sq, c * 64, sk0 + stage * kWsCols * D);
    wgmma_commit();
    issue_pv(prev);
    wgmma_commit();
    pass_turn(n);
    wgmma_wait<1>(); // S_n is ready; P_{n-1}·V_{n-1} may still run
    softmax_block(n, alpha);
    wgmma_wait<0>(); // P_{n-1}·V_{n-1} done: pa and stage prev are free, o is current
    mbar_arrive(&empty[prev]);
    rescale_and_pack(alpha);
  }
  { // the last block's P·V
    const int last = (nblocks - 1) % NST;
    mbar_wait(&full_v[last], ((nblocks - 1) / NST) & 1);
    wgmma_fence();
    issue_pv(last);
    wgmma_commit();
    wgmma_wait<0>();
  }

  st.finish();
  store_rows<D, WL>(o, st, p, row_base, b, h, t);
#else
  __trap(); // built without sm_90a: the dispatcher never launches this
#endif
}

} // namespace fused
