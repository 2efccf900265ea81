// nsa_pack: the selected-block kernel for small GQA groups (G = H / Hkv <= 8), where one query's
// G heads fill few of an MMA tile's 16 rows. A CTA of 4 warps owns QP = 4 * (16 / G) consecutive
// queries of one (K/V head g, batch b); warp w's 16 rows are its 16 / G queries times the G heads
// (row r: query r / G, head r % G; the 16 mod G rows left are padding). The CTA walks the union
// of its queries' lists once, ascending, in stages of 32 keys of one block (BS a multiple of 32):
// a block several queries selected crosses from L2 into shared memory once, not once per query.
// Each stage carries, per union entry, the mask of the CTA's queries that selected it; a warp
// none of whose queries did skips the stage's math (it still helps load and waits at the
// barrier), and within a tile a key counts for a row when the row's query selected its block and,
// with the causal mask, j <= t + offset. Three stages in flight (cp.async), one barrier a stage;
// each warp keeps its rows' online softmax in registers (RowState) and writes out = O / l.
//
// Shared memory: the 4 warps' Q tiles (64 x D), 3 stages of K and V (32 x D each), then the
// union's bookkeeping, sized on the host from the shape (nsa_pack_union(...).bytes()): a bitmap over
// the ceil(Lkv / BS) blocks, its per-word prefix counts, the union's blocks and query masks.
#pragma once
#include "fused_nsa.cuh"

namespace fused {

constexpr int kNsaPackKeys = 32;  // keys per stage, within one block
constexpr int kNsaPackStages = 3; // stages in flight
constexpr int kNsaPackMaxGroup = 8;

// Queries per warp and per CTA for a group of G heads.
__host__ __device__ constexpr int nsa_pack_warp_queries(int G) { return 16 / G; }
__host__ __device__ constexpr int nsa_pack_cta_queries(int G) {
  return kNsaWarps * nsa_pack_warp_queries(G);
}

template <int D> struct NsaPackCfg {
  static constexpr int kStageHalves = 2 * kNsaPackKeys * D; // K then V of one stage
  static constexpr int kQBytes = kNsaWarps * 16 * D * 2;
  static constexpr int kFixedBytes = kQBytes + kNsaPackStages * kStageHalves * 2;
  static_assert(kFixedBytes % 16 == 0, "the union's bookkeeping starts aligned");
};

// The union's bookkeeping for the shape: bitmap words, their prefix counts, then up to
// min(blocks, QP * T) union entries (a query mask of 8 bytes and a block index of 4 each).
struct NsaPackUnion {
  int words, max_entries;
  __host__ __device__ int mask_offset() const { return (2 * words * 4 + 7) / 8 * 8; }
  __host__ __device__ int block_offset() const { return mask_offset() + max_entries * 8; }
  __host__ __device__ int bytes() const { return block_offset() + max_entries * 4 + 16; }
};

__host__ __device__ inline NsaPackUnion nsa_pack_union(int Lkv, int block_size, int selected,
                                                       int G) {
  const int blocks = (Lkv + block_size - 1) / block_size;
  const long listed = (long)nsa_pack_cta_queries(G) * selected;
  NsaPackUnion u;
  u.words = (blocks + 31) / 32;
  u.max_entries = (int)(listed < blocks ? listed : blocks);
  return u;
}

// Entry e of the CTA's lists (query q = e / T of the CTA): its block when it names one that a
// query can see (some key j <= t + offset), else -1.
__device__ __forceinline__ int nsa_pack_entry(const NsaParams &p, int b, int g, int t_first, int e,
                                              int *q_out) {
  const int q = e / p.selected, t = t_first + q;
  *q_out = q;
  if (t >= p.Lq) return -1;
  const int32_t blk =
      __ldg(p.idx + (((long)b * p.Lq + t) * p.Hkv + g) * p.selected + e % p.selected);
  if (!nsa_entry_live(p, blk)) return -1;
  if ((long long)blk * p.block_size > (long long)t + p.offset) return -1;
  return blk;
}

// Build the union of the CTA's lists (ascending blocks ublk[0 .. n), the query mask of each in
// umask) in shared memory; returns n. Every thread of the CTA calls it.
__device__ __forceinline__ int nsa_pack_build_union(const NsaParams &p, const NsaPackUnion &un,
                                                    unsigned char *base, int b, int g, int t_first,
                                                    int n_entries) {
  uint32_t *bits = reinterpret_cast<uint32_t *>(base);
  int *word_start = reinterpret_cast<int *>(base) + un.words;
  unsigned long long *umask = reinterpret_cast<unsigned long long *>(base + un.mask_offset());
  int *ublk = reinterpret_cast<int *>(base + un.block_offset());
  int *count = ublk + un.max_entries;
  const int tid = threadIdx.x;
  for (int w = tid; w < un.words; w += kNsaThreads) bits[w] = 0u;
  __syncthreads();
  for (int e = tid; e < n_entries; e += kNsaThreads) {
    int q;
    const int blk = nsa_pack_entry(p, b, g, t_first, e, &q);
    if (blk >= 0) atomicOr(bits + (blk >> 5), 1u << (blk & 31));
  }
  __syncthreads();
  if (tid < 32) { // warp 0: exclusive prefix of the words' populations
    const int per = (un.words + 31) / 32, w0 = tid * per;
    int mine = 0;
    for (int w = w0; w < min(w0 + per, un.words); w++) mine += __popc(bits[w]);
    int incl = mine;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int v = __shfl_up_sync(0xffffffffu, incl, d);
      if (tid >= d) incl += v;
    }
    int run = incl - mine;
    for (int w = w0; w < min(w0 + per, un.words); w++) {
      word_start[w] = run;
      run += __popc(bits[w]);
    }
    if (tid == 31) *count = incl;
  }
  __syncthreads();
  for (int w = tid; w < un.words; w += kNsaThreads) {
    uint32_t word = bits[w];
    for (int pos = word_start[w]; word; pos++, word &= word - 1) {
      ublk[pos] = w * 32 + __ffs(word) - 1;
      umask[pos] = 0ull;
    }
  }
  __syncthreads();
  for (int e = tid; e < n_entries; e += kNsaThreads) {
    int q;
    const int blk = nsa_pack_entry(p, b, g, t_first, e, &q);
    if (blk < 0) continue;
    const int pos = word_start[blk >> 5] + __popc(bits[blk >> 5] & ((1u << (blk & 31)) - 1u));
    atomicOr(umask + pos, 1ull << q);
  }
  __syncthreads();
  return *count;
}

// Stage s of the union (block ublk[s / spb], its keys (s % spb) * 32 ..): K and V rows gathered
// into a stage by the CTA, zero rows past the keys or past the CTA's last query's horizon.
template <int D>
__device__ __forceinline__ void nsa_pack_load_stage(const NsaParams &p, int key0, int key_end,
                                                    const half *kbase, const half *vbase, half *sk,
                                                    half *sv) {
  constexpr int CHUNKS = D / 8;
#pragma unroll
  for (int i = threadIdx.x; i < kNsaPackKeys * CHUNKS; i += kNsaThreads) {
    const int r = i / CHUNKS, u = i % CHUNKS, j = key0 + r;
    const bool live = j < key_end;
    const long row = (long)(live ? j : 0) * p.Hkv * D + u * 8;
    cp_async16(sk + swz<D>(r, u), kbase + row, live);
    cp_async16(sv + swz<D>(r, u), vbase + row, live);
  }
}

// The union's stages in order: stage s is entry s / spb (spb: stages a block), the block's keys
// (s % spb) * 32 ..; counters, not a division a stage.
struct NsaPackCursor {
  int entry = 0, sub = 0;
  __device__ int key0(const int *ublk, int block_size) const {
    return ublk[entry] * block_size + sub * kNsaPackKeys;
  }
  __device__ void next(int spb) {
    if (++sub == spb) {
      sub = 0;
      entry++;
    }
  }
};

// grid (ceil(Lq / QP), Hkv, B); CTA x takes queries t_first .. t_first + QP - 1 with t_first =
// (gridDim.x - 1 - x) * QP (the longest lists first).
template <int D, int G, bool BF16 = false>
__global__ void __launch_bounds__(kNsaThreads) nsa_pack(NsaParams p, NsaPackUnion un) {
  using C = NsaPackCfg<D>;
  constexpr int QW = nsa_pack_warp_queries(G), QP = nsa_pack_cta_queries(G), KS = kNsaPackKeys;
  static_assert(QP <= 64, "a union entry's query mask is 64 bits");
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const int g = blockIdx.y, b = blockIdx.z;
  const int t_first = (gridDim.x - 1 - blockIdx.x) * QP;
  half *sq = reinterpret_cast<half *>(smem_raw) + warp * 16 * D;
  half *stage0 = reinterpret_cast<half *>(smem_raw + C::kQBytes);
  unsigned char *ubase = smem_raw + C::kFixedBytes;
  const half *kbase = p.k + (long)b * p.Lkv * p.Hkv * D + (long)g * D;
  const half *vbase = p.v + (long)b * p.Lkv * p.Hkv * D + (long)g * D;

  // The warp's Q rows (zero rows for padding and for queries past Lq), in flight during the
  // union's build.
  for (int i = lane; i < 16 * (D / 8); i += 32) {
    const int r = i / (D / 8), u = i % (D / 8), q = r / G, t = t_first + warp * QW + q;
    const bool live = q < QW && t < p.Lq;
    const long row = live ? ((long)b * p.Lq + t) * p.H + (long)g * G + r % G : 0;
    cp_async16(sq + swz<D>(r, u), p.q + row * D + u * 8, live);
  }
  cp_async_commit();

  const int n_union =
      nsa_pack_build_union(p, un, ubase, b, g, t_first, min(QP, p.Lq - t_first) * p.selected);
  const unsigned long long *umask =
      reinterpret_cast<const unsigned long long *>(ubase + un.mask_offset());
  const int *ublk = reinterpret_cast<const int *>(ubase + un.block_offset());
  const int spb = p.block_size / KS, n_stages = n_union * spb;
  const int t_last = min(t_first + QP, p.Lq) - 1;
  const int key_end = (int)min((long long)p.Lkv, (long long)t_last + p.offset + 1);
  NsaPackCursor load_at, math_at; // the next stage to load, the stage the loop computes
  auto issue = [&](int s) {
    if (s < n_stages) {
      half *sk = stage0 + (s % kNsaPackStages) * C::kStageHalves;
      nsa_pack_load_stage<D>(p, load_at.key0(ublk, p.block_size), key_end, kbase, vbase, sk,
                             sk + KS * D);
      load_at.next(spb);
    }
    cp_async_commit(); // an empty group past the end keeps the wait counts uniform
  };
  issue(0);
  issue(1);

  // This lane's two rows (gq, gq + 8): their query within the warp, the key horizon.
  int row_q[2], row_horizon[2];
#pragma unroll
  for (int rr = 0; rr < 2; rr++) {
    const int r = gq + rr * 8, q = r / G, t = t_first + warp * QW + q;
    row_q[rr] = warp * QW + q;
    row_horizon[rr] = (q < QW && t < p.Lq) ? (int)min((long long)t + p.offset, p.Lkv - 1LL) : -1;
  }
  const int warp_horizon = __reduce_max_sync(0xffffffffu, max(row_horizon[0], row_horizon[1]));
  const unsigned long long warp_bits = ((1ull << QW) - 1ull) << (warp * QW);

  float o[D / 8][4];
  frag_zero(o);
  RowState st;
  st.init();
  uint32_t qa[D / 16][4];
  for (int s = 0; s < n_stages; s++) {
    cp_async_wait<1>();
    __syncthreads(); // stage s (and Q) in shared memory; every warp is done with stage s - 1
    issue(s + 2);
    if (s == 0) load_a_frags<D>(qa, sq, 0);
    const unsigned long long sel = umask[math_at.entry];
    const int key0 = math_at.key0(ublk, p.block_size);
    math_at.next(spb);
    if (!(sel & warp_bits) || key0 > warp_horizon) continue;
    const half *sk = stage0 + (s % kNsaPackStages) * C::kStageHalves, *sv = sk + KS * D;
    float x[KS / 8][4];
    gemm_abt<D, KS, BF16>(x, qa, sk);
    int limit[2]; // the last column of the tile that counts for each row, -1: none
#pragma unroll
    for (int rr = 0; rr < 2; rr++)
      limit[rr] = (sel >> row_q[rr]) & 1ull ? row_horizon[rr] - key0 : -1;
#pragma unroll
    for (int nt = 0; nt < KS / 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++)
        if (nt * 8 + 2 * tq + (e & 1) > limit[e >> 1]) x[nt][e] = -CUDART_INF_F;
    float alpha[2];
    st.update_raw<KS / 8>(x, p.scale_log2, alpha);
    frag_scale_rows(o, alpha);
    gemm_pv<D, KS, BF16>(o, x, sv);
  }
  cp_async_wait<0>();
  st.finish();
#pragma unroll
  for (int rr = 0; rr < 2; rr++) {
    if (row_horizon[rr] < 0) continue; // padding row or a query past Lq
    const int r = gq + rr * 8, t = t_first + row_q[rr];
    nsa_store_row<D, BF16>(p.out + (((long)b * p.Lq + t) * p.H + (long)g * G + r % G) * D, o, rr,
                           st.l[rr]);
  }
}

} // namespace fused
