/* kron_tile.h: the index arithmetic of v3's tiles, shared by the GPU kernels (kron_gpu.cu)
 * and their CPU emulation (kron_cpu.c), so the CPU tests check the very formulas the GPU
 * uses. A group's block `blk` covers, for one (b, p) and one chunk qc of the trailing index,
 * the tile t = s·W + w (s: the group's multi-index, w < W); in the [B·P, S, Q] view of a row
 * that is element (bp, s, qc·W + w). Inside the tile, axis l has stride st[l]. */
#ifndef KRON_TILE_H
#define KRON_TILE_H

#include "kron.h"

#if defined(__CUDACC__)
#define KRON_HD static inline __host__ __device__
#else
#define KRON_HD static inline
#endif

/* global element of tile element t of block blk */
KRON_HD long long kron_tile_global(const kron_group *g, long long blk, long long t) {
  long long nqc = g->Q / g->W, bp = blk / nqc, qc = blk % nqc;
  long long s = t / g->W, w = t % g->W;
  return (bp * g->S + s) * g->Q + qc * g->W + w;
}

KRON_HD long long kron_tile_elems(const kron_group *g) { return g->S * g->W; }
KRON_HD long long kron_group_blocks(const kron_group *g, long long batch) {
  return batch * g->P * (g->Q / g->W);
}

/* index of element e along an axis of stride st and length f */
KRON_HD int kron_axis_index(long long e, long long st, int f) { return (int)((e / st) % f); }

/* the element at position i along the axis, of the fibre through e */
KRON_HD long long kron_fiber_first(long long e, long long st, int f) {
  return e - (long long)kron_axis_index(e, st, f) * st;
}

/* fibre number pos (< tile/f), element i along the axis */
KRON_HD long long kron_fiber_elem(long long pos, long long st, int f, int i) {
  return (pos / st) * st * f + (long long)i * st + pos % st;
}

#endif
