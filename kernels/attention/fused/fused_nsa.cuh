// The fused system's kernel for KEYS_SELECTED_BLOCKS (nsa: the selected branch of DeepSeek's
// Native Sparse Attention, with GQA), in the style of the NSA kernels, on mma.sync (sm_80 and
// up; Hopper runs the same instructions). A kernel of its own: the dense kernels are untouched.
//
//   nsa_fwd : one CTA per (query t, K/V head g, batch b) and up to 64 of the group's H/Hkv query
//             heads, which form the M dimension of the m16n8k16 tiles (padded to 16 with zero
//             rows). The query's keys are the concatenation of its listed blocks (the "gathered"
//             keys kk = 0 .. T*BS-1: key j = list[kk / BS] * BS + kk % BS, selected_blocks.h),
//             walked in chunks of 64: cp.async gathers the chunk's K and V rows into swizzled
//             shared memory (absent, past-the-end and causally masked keys are zero-filled, not
//             read), double-buffered so the next chunk's loads overlap this chunk's math. Each
//             warp takes one 16-row tile of heads and a slice of the chunk's keys (MT tiles: 4 /
//             MT slices of 16 * MT keys), keeps its online softmax in registers (RowState of
//             softmax.cuh), and at the end the slices are merged through shared memory in a
//             fixed order (deterministic), then out = O / l. Works for any BS: a block need not
//             align with a chunk, and the trailing absent entries are never walked.
//   nsa_fwd_warp : groups of at most 16 query heads at D <= 64: a warp per (query t, K/V head g,
//             batch b), four consecutive queries a CTA. Each warp walks its own query's keys
//             alone in chunks of 32, a key a lane, through stages of its own (two, or one when
//             every list fits in one chunk), so no warp waits
//             for another (no CTA barrier, no merge) and a CTA's small shared memory keeps more
//             queries in flight per SM; out = O / l from the warp's registers.
#pragma once
#include "softmax.cuh"

namespace fused {

struct NsaParams {
  const half *q, *k, *v; // q [B, Lq, H, D]; k, v [B, Lkv, Hkv, D]
  half *out;             // [B, Lq, H, D]
  const int32_t *idx;    // [B, Lq, Hkv, T]
  int B, H, Hkv, Lq, Lkv;
  int hpg;        // H / Hkv: query heads per K/V head
  int head_tiles; // CTAs per (t, g, b): ceil(hpg / (16 * MT))
  int block_size, selected;
  int offset;       // mask_offset: key j is visible to query t when j <= t + offset
  float scale_log2; // the softmax scale times log2(e)
};

constexpr int kNsaWarps = 4;
constexpr int kNsaThreads = kNsaWarps * 32;
constexpr int kNsaKeys = 64; // gathered keys per chunk

template <int D, int MT> struct NsaCfg {
  static constexpr int kRows = 16 * MT;                 // query heads per CTA
  static constexpr int kSlices = kNsaWarps / MT;        // warps sharing one 16-row tile
  static constexpr int kSliceKeys = kNsaKeys / kSlices; // keys of a chunk per warp
  static constexpr int kStageHalves = 2 * kNsaKeys * D; // K and V of one chunk
  // Q tile, two stages, their key-valid flags; the merge reuses the stages.
  static constexpr int kMergeBytes = (kSlices * kRows * D + 2 * kSlices * kRows) * 4;
  static constexpr int kStageBytes = 2 * kStageHalves * 2;
  static constexpr int smem_bytes() {
    return kRows * D * 2 + (kStageBytes > kMergeBytes ? kStageBytes : kMergeBytes) + 2 * kNsaKeys;
  }
  static_assert(kSliceKeys % 16 == 0, "a warp's keys are whole k16 steps");
};

// A list entry names keys: not absent (< 0) nor past the keys.
__device__ __forceinline__ bool nsa_entry_live(const NsaParams &p, int32_t blk) {
  return blk >= 0 && (long long)blk * p.block_size < p.Lkv;
}

// Gathered key kk of `list` -> key index, or -1 when its entry is absent or past the keys.
__device__ __forceinline__ int nsa_key(const NsaParams &p, const int32_t *list, int kk) {
  const int entry = kk / p.block_size;
  const int32_t blk = __ldg(list + entry);
  if (!nsa_entry_live(p, blk)) return -1;
  const int j = blk * p.block_size + (kk - entry * p.block_size);
  return j < p.Lkv ? j : -1;
}

// Gather chunk c (KEYS keys) of K and V rows into a stage (swizzled), zero rows where the key
// does not count; valid[r] says which rows count (written by the thread loading chunk 0 of the
// row). The NTHREADS threads tid = 0 .. NTHREADS-1 share the copies.
template <int D, int KEYS, int NTHREADS>
__device__ __forceinline__ void
nsa_load_chunk(const NsaParams &p, const int32_t *list, int c, int n_keys, int t, const half *kbase,
               const half *vbase, half *sk, half *sv, unsigned char *valid, int tid) {
  constexpr int CHUNKS = D / 8;
#pragma unroll
  for (int i = tid; i < KEYS * CHUNKS; i += NTHREADS) {
    const int r = i / CHUNKS, u = i % CHUNKS, kk = c * KEYS + r;
    const int j = kk < n_keys ? nsa_key(p, list, kk) : -1;
    const bool live = j >= 0 && j <= t + p.offset;
    const long row = (long)(live ? j : 0) * p.Hkv * D + u * 8;
    cp_async16(sk + swz<D>(r, u), kbase + row, live);
    cp_async16(sv + swz<D>(r, u), vbase + row, live);
    if (u == 0) valid[r] = live;
  }
}

// One chunk of a query's keys, W of them: S = Q K^T (sk: their K rows), the keys that do not
// count (valid[c] == 0) masked, the online softmax folded in, O rescaled and O += P V (sv: their
// V rows).
template <int D, int W, bool BF16>
__device__ __forceinline__ void
nsa_chunk(const NsaParams &p, const uint32_t (&qa)[D / 16][4], const half *sk, const half *sv,
          const unsigned char *valid, RowState &st, float (&o)[D / 8][4]) {
  const int tq = threadIdx.x & 3;
  float s[W / 8][4];
  gemm_abt<D, W, BF16>(s, qa, sk);
#pragma unroll
  for (int nt = 0; nt < W / 8; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++)
      s[nt][e] = valid[nt * 8 + 2 * tq + (e & 1)] ? s[nt][e] * p.scale_log2 : -CUDART_INF_F;
  float alpha[2];
  st.update<W / 8>(s, alpha);
  frag_scale_rows(o, alpha);
  gemm_pv<D, W, BF16>(o, s, sv);
}

// Row rr (0: gq, 1: gq + 8) of a warp's O fragments as out = O / l into orow (l = 0, no key
// counted: out = 0).
template <int D, bool BF16>
__device__ __forceinline__ void nsa_store_row(half *orow, const float (&o)[D / 8][4], int rr,
                                              float l) {
  const int tq = threadIdx.x & 3;
  const float inv = l > 0.f ? 1.f / l : 0.f;
#pragma unroll
  for (int dt = 0; dt < D / 8; dt++)
    *reinterpret_cast<uint32_t *>(orow + dt * 8 + 2 * tq) =
        pack2<BF16>(o[dt][2 * rr] * inv, o[dt][2 * rr + 1] * inv);
}

// The gathered keys a query walks: up to its last live entry only (the lists end with their
// absent entries).
__device__ __forceinline__ int nsa_walked_keys(const NsaParams &p, const int32_t *list) {
  int last = p.selected - 1;
  while (last >= 0 && !nsa_entry_live(p, __ldg(list + last))) last--;
  return (last + 1) * p.block_size;
}

// BF16: bfloat16 q, k, v, out, else fp16.
template <int D, int MT, bool BF16 = false>
__global__ void __launch_bounds__(kNsaThreads) nsa_fwd(NsaParams p) {
  using C = NsaCfg<D, MT>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  half *sq = reinterpret_cast<half *>(smem_raw);
  half *stage0 = sq + C::kRows * D;
  unsigned char *valid0 = smem_raw + C::kRows * D * 2 +
                          (C::kStageBytes > C::kMergeBytes ? C::kStageBytes : C::kMergeBytes);

  const int t = p.Lq - 1 - blockIdx.x; // the longest lists first
  const int g = blockIdx.y / p.head_tiles, h_tile = blockIdx.y % p.head_tiles, b = blockIdx.z;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const int mt = warp % MT, slice = warp / MT;
  const int h_first = h_tile * C::kRows; // within the group
  const int rows = min(C::kRows, p.hpg - h_first);
  const int32_t *list = p.idx + (((long)b * p.Lq + t) * p.Hkv + g) * p.selected;
  const half *qbase = p.q + (((long)b * p.Lq + t) * p.H + (long)g * p.hpg + h_first) * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.Hkv * D + (long)g * D;
  const half *vbase = p.v + (long)b * p.Lkv * p.Hkv * D + (long)g * D;

  const int n_keys = nsa_walked_keys(p, list);
  const int n_chunks = (n_keys + kNsaKeys - 1) / kNsaKeys;

  load_tile_async<C::kRows, D, kNsaThreads>(sq, qbase, D, 0, rows);
  if (n_chunks > 0)
    nsa_load_chunk<D, kNsaKeys, kNsaThreads>(p, list, 0, n_keys, t, kbase, vbase, stage0,
                                             stage0 + kNsaKeys * D, valid0, threadIdx.x);
  cp_async_commit();

  float o[D / 8][4];
  frag_zero(o);
  RowState st;
  st.init();
  uint32_t qa[D / 16][4];
  constexpr int W = C::kSliceKeys;

  for (int c = 0; c < n_chunks; c++) {
    const int buf = c & 1;
    half *sk = stage0 + buf * C::kStageHalves, *sv = sk + kNsaKeys * D;
    const unsigned char *valid = valid0 + buf * kNsaKeys;
    cp_async_wait<0>();
    __syncthreads(); // chunk c in its stage; every warp is done with the other stage
    if (c == 0) load_a_frags<D>(qa, sq, mt * 16);
    if (c + 1 < n_chunks) {
      half *nk = stage0 + (buf ^ 1) * C::kStageHalves;
      nsa_load_chunk<D, kNsaKeys, kNsaThreads>(p, list, c + 1, n_keys, t, kbase, vbase, nk,
                                               nk + kNsaKeys * D, valid0 + (buf ^ 1) * kNsaKeys,
                                               threadIdx.x);
      cp_async_commit();
    }
    nsa_chunk<D, W, BF16>(p, qa, sk + slice * W * D, sv + slice * W * D, valid + slice * W, st, o);
  }
  st.finish();

  // Merge the slices: partial O, max and sum of each (slice, row) through shared memory.
  __syncthreads();                               // every warp is done with the stages
  float *mo = reinterpret_cast<float *>(stage0); // [kSlices][kRows][D]
  float *mm = mo + C::kSlices * C::kRows * D;    // [kSlices][kRows]
  float *ml = mm + C::kSlices * C::kRows;        // [kSlices][kRows]
#pragma unroll
  for (int rr = 0; rr < 2; rr++) {
    const int row = mt * 16 + gq + rr * 8;
    float *dst = mo + (slice * C::kRows + row) * D;
#pragma unroll
    for (int dt = 0; dt < D / 8; dt++)
      *reinterpret_cast<float2 *>(dst + dt * 8 + 2 * tq) =
          make_float2(o[dt][2 * rr], o[dt][2 * rr + 1]);
    if (tq == 0) {
      mm[slice * C::kRows + row] = st.m[rr];
      ml[slice * C::kRows + row] = st.l[rr];
    }
  }
  __syncthreads();
  half *obase = p.out + (((long)b * p.Lq + t) * p.H + (long)g * p.hpg + h_first) * D;
  for (int i = threadIdx.x; i < rows * (D / 2); i += kNsaThreads) {
    const int row = i / (D / 2), d = (i % (D / 2)) * 2;
    float m = -CUDART_INF_F;
#pragma unroll
    for (int sl = 0; sl < C::kSlices; sl++) m = fmaxf(m, mm[sl * C::kRows + row]);
    float l = 0.f, o0 = 0.f, o1 = 0.f;
    if (m != -CUDART_INF_F) { // else no key counted: out = 0
#pragma unroll
      for (int sl = 0; sl < C::kSlices; sl++) {
        const float w = fast_exp2(mm[sl * C::kRows + row] - m);
        const float2 x = *reinterpret_cast<const float2 *>(mo + (sl * C::kRows + row) * D + d);
        l += w * ml[sl * C::kRows + row];
        o0 += w * x.x;
        o1 += w * x.y;
      }
    }
    const float inv = l > 0.f ? 1.f / l : 0.f;
    *reinterpret_cast<uint32_t *>(obase + (long)row * D + d) = pack2<BF16>(o0 * inv, o1 * inv);
  }
}

constexpr int kNsaWarpKeys = 32; // gathered keys per chunk of nsa_fwd_warp: one a lane

// NST stages a warp: 2 (double-buffered) for lists of more than one chunk, 1 when every list fits
// in one (T * BS <= 32), which leaves room for more warps per SM.
template <int D, int NST> struct NsaWarpCfg {
  static_assert(D <= 64, "nsa_fwd_warp: head dims up to 64");
  static_assert(NST == 1 || NST == 2, "nsa_fwd_warp: one or two stages");
  static constexpr int kStageHalves = 2 * kNsaWarpKeys * D; // K and V of one chunk
  // a warp's Q tile (16 rows) and its stages, 128-byte aligned
  static constexpr int kWarpBytes = (16 * D * 2 + NST * kStageHalves * 2 + 127) / 128 * 128;
  static constexpr int smem_bytes() { return kNsaWarps * kWarpBytes; }
};

// The gathered keys a warp walks (nsa_walked_keys), its lanes reading 32 entries at a time.
__device__ __forceinline__ int nsa_warp_walked_keys(const NsaParams &p, const int32_t *list,
                                                    int lane) {
  int last = -1;
  for (int e0 = 0; e0 < p.selected; e0 += 32) {
    const int e = e0 + lane;
    const unsigned live =
        __ballot_sync(0xffffffffu, e < p.selected && nsa_entry_live(p, __ldg(list + e)));
    if (live) last = e0 + 31 - __clz(live);
  }
  return (last + 1) * p.block_size;
}

// Gather chunk c of a warp's keys (lane r maps gathered key 32c + r) into a stage (swizzled,
// rows of keys that do not count zero-filled); returns the chunk's mask of keys that count.
template <int D>
__device__ __forceinline__ unsigned
nsa_warp_gather(const NsaParams &p, const int32_t *list, int c, int n_keys, int t,
                const half *kbase, const half *vbase, half *sk, half *sv, int lane) {
  constexpr int KC = kNsaWarpKeys, CHUNKS = D / 8;
  const int kk = c * KC + lane;
  const int j = kk < n_keys ? nsa_key(p, list, kk) : -1;
  const unsigned live = __ballot_sync(0xffffffffu, j >= 0 && j <= t + p.offset);
#pragma unroll
  for (int i = lane; i < KC * CHUNKS; i += 32) {
    const int r = i / CHUNKS, u = i % CHUNKS;
    const int jr = __shfl_sync(0xffffffffu, j, r);
    const bool counts = (live >> r) & 1u;
    const long row = (long)(counts ? jr : 0) * p.Hkv * D + u * 8;
    cp_async16(sk + swz<D>(r, u), kbase + row, counts);
    cp_async16(sv + swz<D>(r, u), vbase + row, counts);
  }
  return live;
}

// One 32-key chunk of a warp's query: S = Q K^T, the keys outside `live` masked, the online
// softmax (scale in the exponent) folded in, O rescaled and O += P V.
template <int D, bool BF16>
__device__ __forceinline__ void nsa_warp_chunk(const NsaParams &p, const uint32_t (&qa)[D / 16][4],
                                               const half *sk, const half *sv, unsigned live,
                                               RowState &st, float (&o)[D / 8][4]) {
  constexpr int KC = kNsaWarpKeys;
  float s[KC / 8][4];
  gemm_abt<D, KC, BF16>(s, qa, sk);
  const unsigned mine = live >> (2 * (threadIdx.x & 3)); // bit nt * 8 + c: column nt * 8 + 2tq + c
#pragma unroll
  for (int nt = 0; nt < KC / 8; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++)
      if (!((mine >> (nt * 8 + (e & 1))) & 1u)) s[nt][e] = -CUDART_INF_F;
  float alpha[2];
  st.update_raw<KC / 8>(s, p.scale_log2, alpha);
  frag_scale_rows(o, alpha);
  gemm_pv<D, KC, BF16>(o, s, sv);
}

// grid (ceil(Lq / 4), Hkv, B); warp w of CTA x takes query t = Lq - 1 - (4x + w) (the longest
// lists first) of K/V head blockIdx.y, its hpg <= 16 heads as the tile's rows (zero rows after).
// With one stage (NST = 1: T * BS <= 32) the warp walks its one chunk without reading the list's
// extent first: absent entries' keys do not count.
template <int D, int NST, bool BF16 = false>
__global__ void __launch_bounds__(kNsaThreads) nsa_fwd_warp(NsaParams p) {
  using C = NsaWarpCfg<D, NST>;
  constexpr int KC = kNsaWarpKeys;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2;
  const int tt = blockIdx.x * kNsaWarps + warp;
  if (tt >= p.Lq) return; // a whole warp: nothing below waits for another warp
  half *sq = reinterpret_cast<half *>(smem_raw + warp * C::kWarpBytes), *stage0 = sq + 16 * D;
  const int t = p.Lq - 1 - tt, g = blockIdx.y, b = blockIdx.z;
  const int32_t *list = p.idx + (((long)b * p.Lq + t) * p.Hkv + g) * p.selected;
  const half *qbase = p.q + (((long)b * p.Lq + t) * p.H + (long)g * p.hpg) * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.Hkv * D + (long)g * D;
  const half *vbase = p.v + (long)b * p.Lkv * p.Hkv * D + (long)g * D;

  for (int i = lane; i < 16 * (D / 8); i += 32) { // the group's heads, zero rows after them
    const int r = i / (D / 8), u = i % (D / 8);
    cp_async16(sq + swz<D>(r, u), qbase + (long)(r < p.hpg ? r : 0) * D + u * 8, r < p.hpg);
  }
  const int n_keys = NST == 1 ? p.selected * p.block_size : nsa_warp_walked_keys(p, list, lane);
  const int n_chunks = NST == 1 ? 1 : (n_keys + KC - 1) / KC;
  unsigned live = nsa_warp_gather<D>(p, list, 0, n_keys, t, kbase, vbase, stage0, stage0 + KC * D,
                                     lane); // chunk c's keys that count
  cp_async_commit();

  float o[D / 8][4];
  frag_zero(o);
  RowState st;
  st.init();
  uint32_t qa[D / 16][4];
  for (int c = 0; c < n_chunks; c++) {
    const int buf = NST == 2 ? c & 1 : 0;
    const half *sk = stage0 + buf * C::kStageHalves, *sv = sk + KC * D;
    cp_async_wait<0>();
    __syncwarp(); // chunk c in its stage; every lane is done with the other stage
    if (c == 0) load_a_frags<D>(qa, sq, 0);
    unsigned live_next = 0u;
    if (NST == 2 && c + 1 < n_chunks) {
      half *nk = stage0 + (buf ^ 1) * C::kStageHalves;
      live_next =
          nsa_warp_gather<D>(p, list, c + 1, n_keys, t, kbase, vbase, nk, nk + KC * D, lane);
      cp_async_commit();
    }
    nsa_warp_chunk<D, BF16>(p, qa, sk, sv, live, st, o);
    live = live_next;
  }
  st.finish();
  half *obase = p.out + (((long)b * p.Lq + t) * p.H + (long)g * p.hpg) * D;
#pragma unroll
  for (int rr = 0; rr < 2; rr++) {
    const int row = gq + rr * 8;
    if (row < p.hpg) nsa_store_row<D, BF16>(obase + (long)row * D, o, rr, st.l[rr]);
  }
}

} // namespace fused
