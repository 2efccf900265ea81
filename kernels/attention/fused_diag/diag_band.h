/* diag_band.h: which score tiles the fused-diag system caches, where each one lives in the
 * cache, and how large the cache is. Plain C, shared by the host (tests, the log's config
 * line) and the kernels (slot arithmetic), so the two cannot disagree.
 *
 * Tiles are T x T: T query rows (a query block qb) by T keys (a key block kb), with T the
 * forward's row block and the column pass's key block (128 on the sm_90a path, 64 on sm_80).
 * With a band of k key blocks, query block qb caches key blocks kb = qb - d for
 * d = 0 .. min(k, qb + 1) - 1: the diagonal block and the k - 1 blocks left of it (the last
 * ones the causal forward visits). Slots are numbered per (batch, head) in query-block order,
 * then by distance d from the diagonal:
 *
 *   slot(qb, kb) = tiles_before(qb) + (qb - kb),
 *   tiles_before(qb) = sum over q < qb of min(k, q + 1),
 *   tile index = (b * H + h) * tiles_per_head + slot.
 *
 * The head is a factor of its own, so any H and S work: tests/kernels/test_diag_band.c checks
 * shapes with H != S / T. A tile holds T * T values in key-major order (element [key][query],
 * so the column pass reads pairs of consecutive queries) plus T floats: each query row's
 * running maximum m (log2 domain) its values are relative to. */
#ifndef DIAG_BAND_H
#define DIAG_BAND_H

#include <stddef.h>

#ifdef __CUDACC__
#define DIAG_HD __host__ __device__
#else
#define DIAG_HD
#endif

/* Slots of query blocks 0 .. qb - 1 (of one batch and head) for a band of k key blocks. */
static inline DIAG_HD long long diag_tiles_before(long long qb, long long k) {
  if (k <= 0 || qb <= 0) return 0;
  if (qb <= k) return qb * (qb + 1) / 2;
  return k * (k + 1) / 2 + (qb - k) * k;
}

/* Cached tiles of one (batch, head) with nqb query blocks. */
static inline DIAG_HD long long diag_tiles_per_head(long long nqb, long long k) {
  return diag_tiles_before(nqb, k);
}

/* 1 when the tile (query block qb, key block kb) is in the band. */
static inline DIAG_HD int diag_in_band(long long qb, long long kb, long long k) {
  return kb >= 0 && kb <= qb && qb - kb < k;
}

/* The slot of a tile in the band, within its (batch, head). */
static inline DIAG_HD long long diag_slot(long long qb, long long kb, long long k) {
  return diag_tiles_before(qb, k) + (qb - kb);
}

/* Blocks of T covering len. */
static inline DIAG_HD long long diag_blocks(long long len, long long tile) {
  return (len + tile - 1) / tile;
}

/* Bytes of the cache: every (batch, head)'s tiles, T * T values of elem_bytes each (4: fp32,
 * 2: fp16) plus T fp32 row maxima per tile. */
static inline size_t diag_cache_bytes(long long batch, long long heads, long long q_len,
                                      long long tile, long long k, long long elem_bytes) {
  long long tiles = batch * heads * diag_tiles_per_head(diag_blocks(q_len, tile), k);
  return (size_t)(tiles * (tile * tile * elem_bytes + tile * 4));
}

/* Writes the band's (query block, key block) pairs of one (batch, head) in slot order to
 * pairs[0 .. n) (at most max pairs) and returns n, the number of cached tiles. */
static inline long long diag_band_pairs(long long nqb, long long k, long long (*pairs)[2],
                                        long long max) {
  long long n = 0;
  for (long long qb = 0; qb < nqb; qb++)
    for (long long d = 0; d < k && d <= qb; d++, n++)
      if (pairs && n < max) {
        pairs[n][0] = qb;
        pairs[n][1] = qb - d;
      }
  return n;
}

#endif
