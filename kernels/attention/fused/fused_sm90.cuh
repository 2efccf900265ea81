// The sm_90a forward (Hopper): the same online-softmax forward as attn_fwd in fused_sm80.cuh,
// with the matrix products on wgmma. A CTA is two warpgroups, each owning 64 query rows of a
// 128-row block; both share 128-key K and V tiles, double-buffered through cp.async into
// 128-byte-swizzled shared memory that the tensor cores read directly (no ldmatrix, no per-warp
// copies of K and V). S = Q·Kᵀ takes Q and K from shared memory; O += P·V takes P from
// registers (the S accumulators converted to fp16) and V from shared memory, transposed by the
// instruction. Used for every workload but COL_KEYFORMER (whose noise tiles need the shared
// memory this path spends on K/V stages; it stays on the sm_80 forward). Below it, the sm_90a
// column pass (attn_col_sm90), which every column-statistic workload uses on Hopper; the two
// share the column element logic (ColState) with the sm_80 kernels.
#pragma once
#include "fused_sm80.cuh"
#include "wgmma_sm90.cuh"

namespace fused {

constexpr int k90Align = 1024; // 128B-swizzle atoms must start 1024-byte aligned

// Tile configuration: NWG warpgroups of 64 query rows each share BN-key K/V stages.
template <int NWG, int BN> struct Cfg90 {
  static constexpr int kRows = 64 * NWG;
  static constexpr int kCols = BN;
  static constexpr int kThreads = 128 * NWG;
  template <int D> static constexpr int smem_bytes() {
    return (kRows + 4 * kCols) * D * (int)sizeof(half) + k90Align;
  }
};

// A [ROWS, D] fp16 tile as wgmma's 128B-swizzled K-major (or, for V, MN-major) layout: D is cut
// into 64-element slices of ROWS x 128 bytes; within a slice row r's 16-byte chunk c sits at
// chunk c ^ (r & 7). Offset in halves.
template <int ROWS> __device__ __forceinline__ int sw128(int row, int chunk) {
  return (chunk >> 3) * ROWS * 64 + row * 64 + (((chunk & 7) ^ (row & 7)) << 3);
}
// The same swizzle for fp32 (kf's noise, corm's mask, loaded by TMA in boxes one 128-byte row
// wide): element (row, col) of a box of kSw128Floats columns, offset in floats.
constexpr int kSw128Floats = 32;
__device__ __forceinline__ int sw128_f32(int row, int col) {
  return row * kSw128Floats + ((((col >> 2) ^ (row & 7))) << 2) + (col & 3);
}

template <int ROWS, int D, int NTHREADS>
__device__ __forceinline__ void load_tile_sw128(half *tile, const half *base, long row_stride,
                                                int row0, int nrows) {
  constexpr int CHUNKS = D / 8;
#pragma unroll
  for (int i = threadIdx.x; i < ROWS * CHUNKS; i += NTHREADS) {
    int r = i / CHUNKS, c = i % CHUNKS;
    int gr = row0 + r;
    bool valid = gr < nrows;
    cp_async16(tile + sw128<ROWS>(r, c), base + (long)(valid ? gr : 0) * row_stride + c * 8, valid);
  }
}

template <int N, bool BF16 = false>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 8][4], uint64_t a, uint64_t b,
                                         int scale_d) {
  if constexpr (N == 64)
    wgmma_m64n64k16_ss<BF16>(d, a, b, scale_d);
  else
    wgmma_m64n128k16_ss<BF16>(d, a, b, scale_d);
}
template <int N, bool BF16 = false>
__device__ __forceinline__ void wgmma_rs_tb(float (&d)[N / 8][4], const uint32_t (&a)[4],
                                            uint64_t b) {
  if constexpr (N == 64)
    wgmma_m64n64k16_rs_tb<BF16>(d, a, b);
  else
    wgmma_m64n128k16_rs_tb<BF16>(d, a, b);
}

// acc (=) A·Bᵀ issued, not waited: A rows a_row0 .. +63 of an A_ROWS-row sw128 tile, B an N-row
// sw128 tile, both D wide.
template <int D, int N, int A_ROWS, bool BF16 = false>
__device__ __forceinline__ void wgmma_abt_issue(float (&acc)[N / 8][4], const half *a_tile,
                                                int a_row0, const half *b_tile) {
  const uint64_t da0 = sw128_desc(a_tile + a_row0 * 64, 16, 1024),
                 db0 = sw128_desc(b_tile, 16, 1024);
#pragma unroll
  for (int kk = 0; kk < D / 16; kk++) { // 64-column slabs of the tiles, 16 columns a step
    const uint32_t a_off = ((kk >> 2) * A_ROWS * 64 + (kk & 3) * 16) * sizeof(half);
    const uint32_t b_off = ((kk >> 2) * N * 64 + (kk & 3) * 16) * sizeof(half);
    wgmma_ss<N, BF16>(acc, desc_advance(da0, a_off), desc_advance(db0, b_off), kk > 0);
  }
}

// O (+)= P·V issued, not waited: P (this warpgroup's 64 rows x N keys) as mma.sync A fragments
// in registers, V an N-row sw128 tile of D columns read MN-major (transposed B): the leading
// offset steps to the next 64 head-dim columns (one N·128-byte slab on), the stride offset to
// the next 8 keys (1024 bytes on). Checked on an H200: the swapped assignment gives rel_l2 ~ 1.
template <int D, int N, bool BF16 = false>
__device__ __forceinline__ void
wgmma_pv_issue(float (&o)[D / 8][4], const uint32_t (&pa)[N / 16][4], const half *v_tile) {
  const uint64_t dv = sw128_desc(v_tile, N * 128, 1024);
#pragma unroll
  for (int kk = 0; kk < N / 16; kk++) // 16 keys a step
    wgmma_rs_tb<D, BF16>(o, pa[kk], desc_advance(dv, kk * 16 * 64 * (int)sizeof(half)));
}

// The same, fenced, issued and waited (D / 16 k-steps of 16).
template <int D, int N, int A_ROWS, bool BF16 = false>
__device__ __forceinline__ void wgmma_abt(float (&acc)[N / 8][4], const half *a_tile, int a_row0,
                                          const half *b_tile) {
  wgmma_fence();
  wgmma_abt_issue<D, N, A_ROWS, BF16>(acc, a_tile, a_row0, b_tile);
  wgmma_commit();
  wgmma_wait<0>();
}

// BF16: bfloat16 q, k, v, out, else fp16 (the tiles' 16-bit elements are copied either way).
template <int D, int WL, int NWG, int BN, bool BF16 = false>
__global__ void __launch_bounds__(128 * NWG) attn_fwd_sm90(Params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Cfg90<NWG, BN>;
  constexpr int k90Rows = C::kRows, k90Cols = C::kCols, k90Threads = C::kThreads;
  extern __shared__ unsigned char smem_raw90[];
  half *sq = reinterpret_cast<half *>((reinterpret_cast<uintptr_t>(smem_raw90) + k90Align - 1) &
                                      ~(uintptr_t)(k90Align - 1));
  half *sk0 = sq + k90Rows * D;      // K stages 0, 1
  half *sv0 = sk0 + 2 * k90Cols * D; // V stages 0, 1

  const int qb = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z;
  const int m0 = qb * k90Rows;
  const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const half *qbase = p.q + (long)b * p.Lq * p.row_stride + h * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.row_stride + h * D;
  const half *vbase = p.v + (long)b * p.Lkv * p.row_stride + h * D;

  const int last_row = min(m0 + k90Rows, p.Lq) - 1;
  const int kv_end = min(p.Lkv, last_row + p.offset + 1);
  const int nblocks = (kv_end + k90Cols - 1) / k90Cols;
  const int row_base = m0 + wg * 64 + warp * 16 + g; // rows row_base and row_base + 8
  const float scale_log2 = p.scale * kLog2e;

  load_tile_sw128<k90Rows, D, k90Threads>(sq, qbase, p.row_stride, m0, p.Lq);
  cp_async_commit();
  load_tile_sw128<k90Cols, D, k90Threads>(sk0, kbase, p.row_stride, 0, p.Lkv);
  load_tile_sw128<k90Cols, D, k90Threads>(sv0, vbase, p.row_stride, 0, p.Lkv);
  cp_async_commit();
  if (nblocks > 1) {
    load_tile_sw128<k90Cols, D, k90Threads>(sk0 + k90Cols * D, kbase, p.row_stride, k90Cols, p.Lkv);
    load_tile_sw128<k90Cols, D, k90Threads>(sv0 + k90Cols * D, vbase, p.row_stride, k90Cols, p.Lkv);
  }
  cp_async_commit();

  float o[D / 8][4];
  frag_zero(o);
  RowState st;
  st.init();

  for (int n = 0; n < nblocks; n++) {
    cp_async_wait<1>(); // everything but block n+1's tiles has landed
    fence_proxy_async();
    __syncthreads();
    const half *sk = sk0 + (n & 1) * k90Cols * D;
    const half *sv = sv0 + (n & 1) * k90Cols * D;

    float s[k90Cols / 8][4];
    wgmma_abt<D, k90Cols, k90Rows, BF16>(s, sq, wg * 64, sk);

    const int j0 = n * k90Cols;
    const bool edge = j0 + k90Cols - 1 > m0 + p.offset || j0 + k90Cols > p.Lkv;
    mask_scores<WL>(s, p, row_base, j0, edge, scale_log2, t);
    float alpha[2];
    st.update<k90Cols / 8>(s, alpha);
    frag_scale_rows(o, alpha);
    uint32_t pa[k90Cols / 16][4];
    frag_pack_a<k90Cols / 8, BF16>(pa, s);
    wgmma_fence();
    wgmma_pv_issue<D, k90Cols, BF16>(o, pa, sv);
    wgmma_commit();
    wgmma_wait<0>();

    __syncthreads(); // both warpgroups are done with this stage's K and V
    if (n + 2 < nblocks) {
      load_tile_sw128<k90Cols, D, k90Threads>(sk0 + (n & 1) * k90Cols * D, kbase, p.row_stride,
                                              (n + 2) * k90Cols, p.Lkv);
      load_tile_sw128<k90Cols, D, k90Threads>(sv0 + (n & 1) * k90Cols * D, vbase, p.row_stride,
                                              (n + 2) * k90Cols, p.Lkv);
    }
    cp_async_commit(); // possibly empty: keeps wait_group<1> meaning "all but the newest"
  }

  st.finish();
  store_rows<D, WL, BF16>(o, st, p, row_base, b, h, t);
#else
  __trap(); // built without sm_90a: the dispatcher never launches this
#endif
}

// Column pass on wgmma: each of the two warpgroups owns 64 keys; Sᵀ = K·Qᵀ for QN queries per
// step, both from 128B-swizzled shared memory, the query tiles (with their LSE and, for kf and
// corm, the fp32 noise / mask tile) double-buffered. The reduction over queries stays in
// registers. QN is 128 for the COL_SUM/COL_SUM_SQ workloads and 64 for those reading an fp32 S×S input
// (COL_KEYFORMER, COL_ANY_GE_MASK), whose fp32 tiles need the room.
constexpr int kCol90Keys = 128, kCol90Threads = 256;
constexpr int kCol90AuxPitch = kCol90Keys + 4; // floats: a warp's scalar reads hit distinct banks
template <int WL> __host__ __device__ constexpr int col90_queries() {
  return has_aux<WL>() ? 64 : 128;
}
template <int D, int WL> constexpr int col90_smem_bytes() {
  constexpr int QN = col90_queries<WL>();
  return (kCol90Keys + 2 * QN) * D * (int)sizeof(half) + 2 * QN * (int)sizeof(float) +
         (has_aux<WL>() ? 2 * QN * kCol90AuxPitch * (int)sizeof(float) : 0) + k90Align;
}

// BF16: bfloat16 q and k, else fp16.
template <int D, int WL, bool BF16 = false>
__global__ void __launch_bounds__(kCol90Threads) attn_col_sm90(Params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int QN = col90_queries<WL>();
  extern __shared__ unsigned char smem_raw90[];
  half *sk = reinterpret_cast<half *>((reinterpret_cast<uintptr_t>(smem_raw90) + k90Align - 1) &
                                      ~(uintptr_t)(k90Align - 1));
  half *sq0 = sk + kCol90Keys * D;                            // query stages 0, 1
  float *slse0 = reinterpret_cast<float *>(sq0 + 2 * QN * D); // their LSE
  float *saux0 = slse0 + 2 * QN;                              // their noise / mask tiles

  const int h = blockIdx.x, kb = blockIdx.y, b = blockIdx.z;
  const int j0 = kb * kCol90Keys;
  const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const long bh = (long)b * p.H + h;
  const half *qbase = p.q + (long)b * p.Lq * p.row_stride + h * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.row_stride + h * D;
  const float *lse = (wl_traits<WL>::keyformer ? p.lse_kf : p.lse) + bh * p.Lq;
  const float *abase = wl_traits<WL>::keyformer ? p.exp_rand + bh * p.Lq * p.Lkv : p.corm_mask;
  const bool vec4 = (p.Lkv & 3) == 0;

  const int first_row = max(0, j0 - p.offset);
  const int qb0 = first_row / QN;
  const int nblocks = (p.Lq + QN - 1) / QN;
  const int jl_base = wg * 64 + warp * 16 + g; // this thread's keys within the tile: +0, +8
  const int col_base = j0 + jl_base;
  const float scale_log2 = p.scale * kLog2e;

  // Query tile n with its LSE (rows past Lq get +inf, so their terms vanish) and aux tile.
  auto load_queries = [&](int n, int stage) {
    load_tile_sw128<QN, D, kCol90Threads>(sq0 + stage * QN * D, qbase, p.row_stride, n * QN, p.Lq);
    if (has_aux<WL>())
      load_ftile_async<QN, kCol90Keys, kCol90AuxPitch, kCol90Threads>(
          saux0 + stage * QN * kCol90AuxPitch, abase, p.Lkv, n * QN, p.Lq, j0, p.Lkv, vec4);
    if (threadIdx.x < QN) {
      int row = n * QN + threadIdx.x;
      slse0[stage * QN + threadIdx.x] = row < p.Lq ? __ldg(lse + row) : CUDART_INF_F;
    }
  };
  load_tile_sw128<kCol90Keys, D, kCol90Threads>(sk, kbase, p.row_stride, j0, p.Lkv);
  if (qb0 < nblocks) load_queries(qb0, 0);
  cp_async_commit();

  ColState<WL> cs;
  for (int n = qb0; n < nblocks; n++) {
    const int stage = (n - qb0) & 1;
    cp_async_wait<0>();
    fence_proxy_async();
    __syncthreads(); // tile n visible; every warp is done with stage ^ 1
    if (n + 1 < nblocks) load_queries(n + 1, stage ^ 1);
    cp_async_commit();

    const half *sq = sq0 + stage * QN * D;
    const float *slse = slse0 + stage * QN;
    const float *aux = saux0 + stage * QN * kCol90AuxPitch;
    float s[QN / 8][4];
    wgmma_abt<D, QN, kCol90Keys, BF16>(s, sk, wg * 64, sq);

    const int i0 = n * QN;
    const bool edge =
        j0 + kCol90Keys - 1 > i0 + p.offset || i0 + QN > p.Lq || j0 + kCol90Keys > p.Lkv;
#pragma unroll
    for (int nt = 0; nt < QN / 8; nt++) {
      const float2 l2 = *reinterpret_cast<const float2 *>(slse + nt * 8 + 2 * t);
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int rr = e >> 1, il = nt * 8 + 2 * t + (e & 1), jl = jl_base + rr * 8;
        const float row_lse = (e & 1) ? l2.y : l2.x;
        const float x = score_log2<WL>(s[nt][e], scale_log2);
        bool live = true;
        if (edge) live = j0 + jl < p.Lkv && j0 + jl <= i0 + il + p.offset && i0 + il < p.Lq;
        cs.add(rr, x, row_lse, has_aux<WL>() ? aux[il * kCol90AuxPitch + jl] : 0.f, live);
      }
    }
  }

  cs.store(p, bh, col_base);
#else
  __trap();
#endif
}

} // namespace fused
