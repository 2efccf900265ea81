/* kron_tile.h: the index arithmetic of v3's kernels, shared by the GPU kernels (kron_kernels.cu)
 * and their CPU emulation (kron_cpu.c), so the CPU tests check the very formulas the GPU uses:
 * which global element a tile element is, the order the load and store loops walk a tile, where
 * a row or column of a contraction sits in shared memory, and which outputs each thread's
 * micro-tile covers. Everything is a pure function of the plan (kron.h) and the thread.
 *
 * Stage tiles (kron_tiling in kron.h): element (s, v) at s·ld + v in shared memory; s is the
 * multi-index of the stage's axes, v = nb·W + w. Contracting the stage's axis l is
 *     out[hi][a][lo] = sum_b P[b][a] · in[hi][b][lo]
 * with hi the axes before l, lo the axes after it and then v; P = A^T (forward) or A (the
 * backward's A^T chain), both stored so that a row b is contiguous in a. A thread owns a
 * micro-tile of TM values of a and TN values of lo, in chunks of RV (always 16 bytes) and CV
 * (16 bytes, or 1 element) spread so that the 8 threads of a quarter warp read 8 consecutive
 * chunks (no bank conflicts). Transposed tiles (t->tr) hold the same tiling as element (s, v) at
 * v·ld + s: the gradient's, so that gA_k = sum_v G[v][i]·T[v][j] reads rows too, and tensor-core
 * stages with Q = 1, whose slabs are then rows in both memories. */
#ifndef KRON_TILE_H
#define KRON_TILE_H

#include "kron.h"

#if defined(__CUDACC__)
#define KRON_HD static inline __host__ __device__
#else
#define KRON_HD static inline
#endif

/* elements per 16-byte chunk */
KRON_HD int kron_vw(int es) { return 16 / es; }

/* ---- tiles ---------------------------------------------------------------------------------- */

/* first slab r0 and first q0 of tile `tile` */
KRON_HD void kron_tile_origin(const kron_tiling *t, long long tile, long long *r0, long long *q0) {
  long long nq = t->Q / t->W;
  *r0 = tile / nq * t->NB;
  *q0 = tile % nq * t->W;
}

/* global element of tile element (s, v) */
KRON_HD long long kron_tile_gaddr(const kron_tiling *t, long long r0, long long q0, long long s,
                                  long long v) {
  long long nb = v / t->W, w = v % t->W;
  return ((r0 + nb) * t->S + s) * t->Q + q0 + w;
}

/* The load and store loops walk a tile in units: 16-byte chunks on vec tiles, else elements,
 * numbered (c, s, nb) with c fastest, so consecutive threads touch consecutive addresses.
 * Stage tiles: runs (nb, s) of W elements in both memories; c < W/per indexes the run.
 * Transposed tiles (t->tr, element (s, v) at v·ld + s): vec tiles (W = Q = 1, rows of whole
 * 16-byte chunks) are slabs nb of kron_tr_rows rows s of S/rows elements, c < S/rows/vw;
 * else as stage tiles. */
typedef struct {
  long long cpr, S, units; /* c < cpr, s < S, nb < NB */
  int per;                 /* elements per unit */
} kron_radix;

KRON_HD kron_radix kron_stage_radix(const kron_tiling *t, int vw) {
  kron_radix r;
  r.per = t->vec ? vw : 1;
  r.cpr = t->W / r.per;
  r.S = t->S;
  r.units = r.cpr * r.S * t->NB;
  return r;
}

/* the row length and rows per slab of a transposed tile (kron_tiling.rowlen) */
KRON_HD long long kron_tr_rowlen(const kron_tiling *t) { return t->rowlen > 0 ? t->rowlen : t->S; }
KRON_HD long long kron_tr_rows(const kron_tiling *t) { return t->S / kron_tr_rowlen(t); }

KRON_HD kron_radix kron_tr_radix(const kron_tiling *t, int vw) {
  kron_radix r;
  if (t->vec) { /* unit (c, s, nb): chunk c of row s of slab nb */
    r.per = vw;
    r.S = kron_tr_rows(t);
    r.cpr = kron_tr_rowlen(t) / vw;
  } else {
    r.per = 1;
    r.cpr = t->W;
    r.S = t->S;
  }
  r.units = r.cpr * r.S * t->NB;
  return r;
}

/* Global offset of column v of a tile: element (s, v) is at kron_tile_base + s·Q + this (the
 * tensor-core stages store their fragments straight to global memory with it). */
KRON_HD long long kron_tile_coff(const kron_tiling *t, long long v) {
  return v / t->W * t->S * t->Q + v % t->W;
}

/* global offset of tile `tile`'s element (0, 0) */
KRON_HD long long kron_tile_base(const kron_tiling *t, long long tile) {
  long long nq = t->Q / t->W;
  return tile / nq * t->NB * t->S * t->Q + tile % nq * t->W;
}

/* Unit (c, s, nb) of a tile: its shared-memory offset (int: a tile is at most 65536 elements)
 * and its global offset from kron_tile_base. */
KRON_HD int kron_stage_sm(const kron_tiling *t, int per, int c, int s, int nb) {
  return s * (int)t->ld + nb * (int)t->W + c * per;
}
KRON_HD long long kron_stage_goff(const kron_tiling *t, int per, int c, int s, int nb) {
  return (long long)(nb * (int)t->S + s) * t->Q + c * per;
}
/* (vec: row nb·rows + s; with several rows per slab the tile is one slab, nb = 0, else s = 0,
 * so the row is nb + s: no division in the copy loops) */
KRON_HD int kron_tr_sm(const kron_tiling *t, int per, int c, int s, int nb) {
  return t->vec ? (nb + s) * (int)t->ld + c * per /* W = Q = 1 */
                : (nb * (int)t->W + c) * (int)t->ld + s;
}
KRON_HD long long kron_tr_goff(const kron_tiling *t, int per, int c, int s, int nb) {
  return t->vec ? (long long)nb * t->S + s * kron_tr_rowlen(t) + c * per
                : (long long)(nb * (int)t->S + s) * t->Q + c;
}

/* either tiling's walk and unit offsets, by t->tr */
KRON_HD kron_radix kron_tile_radix(const kron_tiling *t, int vw) {
  return t->tr ? kron_tr_radix(t, vw) : kron_stage_radix(t, vw);
}
KRON_HD int kron_tile_sm(const kron_tiling *t, int per, int c, int s, int nb) {
  return t->tr ? kron_tr_sm(t, per, c, s, nb) : kron_stage_sm(t, per, c, s, nb);
}
KRON_HD long long kron_tile_goff(const kron_tiling *t, int per, int c, int s, int nb) {
  return t->tr ? kron_tr_goff(t, per, c, s, nb) : kron_stage_goff(t, per, c, s, nb);
}

/* A thread's walk over units e = first, first + step, ...: after the start, increments
 * without divisions (the mixed-radix step is added digit by digit with carries). */
typedef struct {
  int c, s, nb;    /* the current unit's digits */
  int dc, ds, dnb; /* the step's digits */
  int cpr, S;
} kron_walk;

/* (ints: first and step are thread counts, the digits a tile's; 64-bit divisions are long
 * subroutines on the GPU) */
KRON_HD kron_walk kron_walk_start(const kron_radix *r, int first, int step) {
  kron_walk w;
  w.cpr = (int)r->cpr;
  w.S = (int)r->S;
  int ri = first / w.cpr, dri = step / w.cpr;
  w.c = first % w.cpr;
  w.s = ri % w.S;
  w.nb = ri / w.S;
  w.dc = step % w.cpr;
  w.ds = dri % w.S;
  w.dnb = dri / w.S;
  return w;
}

KRON_HD void kron_walk_next(kron_walk *w) {
  int carry;
  w->c += w->dc;
  carry = w->c >= w->cpr;
  if (carry) w->c -= w->cpr;
  w->s += w->ds + carry;
  w->nb += w->dnb;
  if (w->s >= w->S) {
    w->s -= w->S;
    w->nb++;
  }
}

/* ---- contractions of a stage tile ------------------------------------------------------------ */

typedef struct {
  int f;         /* the axis's length */
  long long H;   /* fibres before it (hi) */
  long long st;  /* its stride in shared memory */
  long long nlo; /* columns after it (valid ones: V per row of the tile) */
  long long V, ld;
} kron_ctr;

/* axis l of a stage whose factors are f[0..g) */
KRON_HD kron_ctr kron_ctr_of(const kron_tiling *t, const int *f, int g, int l) {
  kron_ctr c;
  long long inner = 1, outer = 1;
  for (int i = l + 1; i < g; i++) inner *= f[i];
  for (int i = 0; i < l; i++) outer *= f[i];
  c.f = f[l];
  c.H = outer;
  c.st = inner * t->ld;
  c.nlo = inner * t->V;
  c.V = t->V;
  c.ld = t->ld;
  return c;
}

/* Shared-memory offset of column lo inside a fibre (skips the padding at the end of rows).
 * In-tile indices are ints: a tile is at most 65536 elements (kron_algo.c). */
KRON_HD int kron_lo_off(int lo, int V, int ld) { return lo / V * ld + lo % V; }

/* ---- micro-tiles ------------------------------------------------------------------------------ */

KRON_HD int kron_mt_tm(int mt) { return mt == KRON_MT_8x8 || mt == KRON_MT_8x1S ? 8 : 4; }
KRON_HD int kron_mt_tn(int mt) {
  return mt == KRON_MT_8x1S ? 1 : mt == KRON_MT_8x8 || mt == KRON_MT_4x8 ? 8 : 4;
}
/* columns in 16-byte chunks (else element by element) */
KRON_HD int kron_mt_colvec(int mt) {
  return mt == KRON_MT_8x8 || mt == KRON_MT_4x8 || mt == KRON_MT_4x4;
}

/* groups of per-thread extent `per` covering n */
KRON_HD int kron_groups(long long n, int per) { return (int)((n + per - 1) / per); }

/* First index of chunk j (of c elements) of group grp when `groups` groups interleave: chunk j
 * of every group comes before chunk j + 1 of any, so neighbouring groups read neighbouring
 * chunks. Over j < per/c and grp < groups this covers [0, groups·per) exactly once. */
KRON_HD int kron_chunk0(int j, int groups, int grp, int c) { return (j * groups + grp) * c; }

/* Work unit u of a contraction with ma row groups and nl column groups: column group fastest
 * (a quarter warp reads consecutive column chunks and shares its row chunks), then the row
 * group, then hi. */
KRON_HD void kron_unit(int u, int ma, int nl, int *hi, int *ag, int *lg) {
  *lg = u % nl;
  *ag = u / nl % ma;
  *hi = u / (nl * ma);
}

/* ---- tensor-core contractions (micro-tile "tc") ---------------------------------------------
 * A warp computes a WM x WN block of mma tiles: C[m][n] += sum_k Am[m][k] Bm[k][n] with
 * mma.sync m16n8k8 tf32 (fp32, as three products: 3xTF32) or m8n8k4 f64 (fp64). Operand
 * elements sit in shared memory at Am: m·a_sm + k·a_sk, Bm: k·ld + n. These are the register
 * fragments of PTX's mma layouts (g = lane / 4, t = lane % 4): which (row, column) of its tile
 * register i of a lane holds. The CPU emulation (kron_cpu.c) gathers through these and
 * multiplies with its own statement of the hardware's layout, so a wrong formula here fails the
 * CPU tests. */
KRON_HD int kron_tc_mrows(int es) { return es == 4 ? 16 : 8; } /* rows of an mma tile */
KRON_HD int kron_tc_kstep(int es) { return es == 4 ? 8 : 4; }  /* its k extent */
#define KRON_TC_N 8                                            /* its columns */
KRON_HD int kron_tc_aregs(int es) { return es == 4 ? 4 : 1; }
KRON_HD int kron_tc_bregs(int es) { return es == 4 ? 2 : 1; }
KRON_HD int kron_tc_cregs(int es) { return es == 4 ? 4 : 2; }

KRON_HD void kron_tc_frag_a(int es, int lane, int i, int *row, int *k) {
  int g = lane >> 2, t = lane & 3;
  *row = es == 4 ? g + 8 * (i & 1) : g;
  *k = es == 4 ? t + 4 * (i >> 1) : t;
}
KRON_HD void kron_tc_frag_b(int es, int lane, int i, int *k, int *col) {
  *k = (lane & 3) + (es == 4 ? 4 * i : 0);
  *col = lane >> 2;
}
KRON_HD void kron_tc_frag_c(int es, int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane & 3;
  *row = es == 4 ? g + 8 * (i >> 1) : g;
  *col = 2 * t + (i & 1);
}

/* The warp tiles (wm, wn) the kernels instantiate, in the plan's order of preference: one list
 * for the plan's choice (kron_algo.c), the launch checks and the kernels' dispatch
 * (kron_kernels.cu), X(wm, wn) each. The gradient's larger first tile has the registers of its
 * one-block-per-SM kernel. */
#define KRON_TC_STAGE_TILES(X) X(2, 4) X(1, 4) X(2, 2) X(1, 2) X(1, 1)
/* Blocks per SM a tensor-core stage kernel is compiled for (its __launch_bounds__; the plan's
 * grid): three 256-thread blocks at <= 80 registers, which every warp tile but fp32's 1x4, 2x2
 * and 2x4 fits without spills (ptxas, sm_90a). */
#define KRON_TC_STAGE_BLOCKS(es, wm, wn) ((es) == 4 && (wm) * (wn) >= 4 ? 2 : 3)
#define KRON_TC_GRAD_TILES(X)            X(4, 4) X(2, 4) X(2, 2) X(1, 2) X(1, 1)

/* Unit u of an M x N output in warp tiles of WM x WN mma tiles: its first row and column
 * (column groups fastest: neighbouring warps share their A fragments' rows). */
KRON_HD void kron_tc_unit(int u, int es, int N, int wm, int wn, int *m0, int *n0) {
  int un = N / (KRON_TC_N * wn);
  *m0 = u / un * kron_tc_mrows(es) * wm;
  *n0 = u % un * KRON_TC_N * wn;
}
KRON_HD int kron_tc_units(int es, int M, int N, int wm, int wn) {
  return M / (kron_tc_mrows(es) * wm) * (N / (KRON_TC_N * wn));
}

/* ---- the gradient's work split -------------------------------------------------------------- */

/* rows [v0, v1) of each tile that thread part kp of kp_n sums */
KRON_HD void kron_kp_range(long long V, int kp, int kp_n, long long *v0, long long *v1) {
  *v0 = V * kp / kp_n;
  *v1 = V * (kp + 1) / kp_n;
}

/* tiles [t0, t1) of split `c` of `ksplit` */
KRON_HD void kron_split_range(long long tiles, int c, int ksplit, long long *t0, long long *t1) {
  long long per = (tiles + ksplit - 1) / ksplit;
  *t0 = per * c;
  *t1 = *t0 + per < tiles ? *t0 + per : tiles;
  if (*t0 > tiles) *t0 = tiles;
}

#endif
