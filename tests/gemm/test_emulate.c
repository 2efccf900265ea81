/* Both GEMM kernels' data movement emulated on the CPU (no GPU here): every CTA of the grid,
 * one after another, with the kernels' own offset helpers (gemm_plan.h: ring offsets,
 * descriptor starts, ldmatrix lane addresses, accumulator positions, the tile order) and a
 * model of what the hardware does with them, written here independently:
 *
 *   TMA          a box of [rows x 64] 16-bit elements lands row after row (128 bytes each);
 *                128B swizzle: byte address bits 4-6 ^= bits 7-9; outside the matrix: zeros
 *   wgmma        K-major A: element (m, k) at start + (m/8)·SBO + (m%8)·128 + 2k; N-major B
 *                (tnspB): (k, n) at start + (n/64)·LBO + (k/8)·SBO + (k%8)·128 + 2(n%64);
 *                both through the swizzle; lane layout: d[j][e] of lane l in warp w is row
 *                16w + l/4 (+8 for e >= 2), column 8j + 2(l%4) + (e&1)
 *   cp.async     16-byte chunks, zero-filled when not valid; fused::swz places chunk c of row r
 *                at chunk c ^ (r & 7)
 *   ldmatrix.x4  lanes 8q..8q+7 give the row addresses of matrix q; register q of lane l holds
 *                (row l/4, columns 2(l%4), +1) of matrix q; .trans: (rows 2(l%4), +1; column l/4)
 *   mma m16n8k16 a: (g, 2t..), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..); b: (k 2t.., n g),
 *                (k 2t+8.., n g); c: (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)
 *
 * The smem is filled with NaN bits first, so stale data in skipped boxes must never reach a
 * stored output. The result is checked against the double reference with gemm_compare. */
#include "../check.h"
#include "gemm.h"
#include "gemm_plan.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  gemm_problem p;
  uint16_t *a, *b; /* inputs (storage bits) */
  uint16_t *c;     /* output (storage bits), NaN-poisoned */
  int bad_store;   /* a store outside C, or stage bytes off the barrier's expectation */
  size_t smem_max; /* highest ring byte touched + 1 */
} emu;

static float val(const emu *e, uint16_t bits) {
  return rng_elem_to_float(bits, e->p.dtype == GEMM_BF16);
}

static void store(emu *e, long r, long col, float x) {
  if (r < 0 || r >= e->p.m || col < 0 || col >= e->p.n) {
    e->bad_store = 1;
    return;
  }
  e->c[r * e->p.n + col] = rng_float_to_elem(x, e->p.dtype == GEMM_BF16);
}

/* ---- the wgmma kernel ------------------------------------------------------------------------ */
static size_t swz128(size_t byte) { return byte ^ (((byte >> 7) & 7) << 4); }

static void tma_box(emu *e, uint16_t *ring, int off, const uint16_t *g, long rows, long cols,
                    long r0, long c0, int box_rows) {
  for (int r = 0; r < box_rows; r++)
    for (int c = 0; c < GW_BOX; c++) {
      int in = r0 + r < rows && c0 + c < cols;
      size_t byte = swz128((size_t)off * 2 + (size_t)r * 128 + (size_t)c * 2);
      ring[byte / 2] = in ? g[(r0 + r) * cols + c0 + c] : 0;
      if (byte + 2 > e->smem_max) e->smem_max = byte + 2;
    }
}

/* d[64][bn] += A (desc at a_off elements) · B (desc at b_off), one k16 step */
static void wgmma(const emu *e, float *d, int bn, const uint16_t *ring, int a_off, int b_off) {
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < bn; n++) {
      float s = d[m * bn + n];
      for (int k = 0; k < 16; k++) {
        size_t ab = (size_t)a_off * 2 + (m / 8) * GW_DESC_SBO + (m % 8) * 128 + k * 2;
        size_t bb = (size_t)b_off * 2 + (n / 64) * GW_DESC_B_LBO + (k / 8) * GW_DESC_SBO +
                    (k % 8) * 128 + (n % 64) * 2;
        s += val(e, ring[swz128(ab) / 2]) * val(e, ring[swz128(bb) / 2]);
      }
      d[m * bn + n] = s;
    }
}

/* One cluster of pl->cluster CTAs (one with --cluster 1), each with its own ring; a B box
 * loaded by its owner (rank x % CM) lands in every CTA's ring (multicast). The bytes that land
 * in each CTA's stage must be what its producer told the full barrier to expect. */
static void emulate_wgmma(emu *e, const gemm_plan *pl) {
  const int bn = pl->bn, S = pl->stages, CM = pl->cluster;
  size_t ring_elems = (size_t)gw_bar_offset(bn);
  uint16_t *ring[2];
  float *d[2];
  for (int r = 0; r < CM; r++) {
    ring[r] = malloc(ring_elems * 2);
    memset(ring[r], 0xff, ring_elems * 2);
    d[r] = malloc(2 * 64 * (size_t)bn * sizeof *d[r]);
  }
  const gemm_problem *p = &e->p;
  for (int cl = 0; cl < pl->grid / CM; cl++) {
    int stage = 0; /* runs on across the cluster's units, as in the kernel */
    for (int u = cl; u < pl->units; u += pl->grid / CM) {
      int mb[2] = {0, 0}, nb[2] = {0, 0};
      for (int r = 0; r < CM; r++) {
        gw_unit_tile(u, pl->tiles_m, pl->tiles_n, CM, r, &mb[r], &nb[r]);
        memset(d[r], 0, 2 * 64 * (size_t)bn * sizeof *d[r]);
      }
      const int n0 = nb[0] * bn, boxes = gw_b_boxes(bn, (int)p->n, n0);
      int same_n = CM == 1 || nb[1] == nb[0], bytes_ok = 1;
      for (int kb = 0; kb < pl->k_blocks; kb++) {
        unsigned landed[2] = {0, 0};
        for (int r = 0; r < CM; r++) /* A: each CTA its own, none past M */
          if (mb[r] * GW_BM < p->m) {
            tma_box(e, ring[r], gw_a_stage(stage), e->a, p->m, p->k, (long)mb[r] * GW_BM,
                    (long)kb * GW_BK, GW_BM);
            landed[r] += GW_A_STAGE_BYTES;
          }
        for (int x = 0; x < boxes; x++) /* B: the owner's load, written to every CTA */
          for (int dst = 0; dst < CM; dst++) {
            tma_box(e, ring[dst], gw_b_box(bn, stage, x), e->b, p->k, p->n, (long)kb * GW_BK,
                    n0 + x * GW_BOX, GW_BK);
            landed[dst] += GW_B_BOX_BYTES;
          }
        for (int r = 0; r < CM; r++) {
          bytes_ok &= landed[r] == gw_stage_bytes(mb[r] * GW_BM < p->m, boxes);
          for (int c = 0; c < GW_CONSUMERS; c++)
            for (int kk = 0; kk < GW_BK / 16; kk++)
              wgmma(e, d[r] + (size_t)c * 64 * bn, bn, ring[r], gw_desc_a(stage, c, kk),
                    gw_desc_b(bn, stage, kk));
        }
        stage = (stage + 1) % S;
      }
      if (!same_n || !bytes_ok) e->bad_store = 1;
      /* the epilogue: each lane's registers (hardware layout) to where the kernel puts them */
      for (int r = 0; r < CM; r++) {
        const long m0 = (long)mb[r] * GW_BM;
        for (int c = 0; c < GW_CONSUMERS; c++)
          for (int w = 0; w < 4; w++)
            for (int l = 0; l < 32; l++)
              for (int j = 0; j < bn / 8; j++)
                for (int q = 0; q < 4; q++) {
                  int hr = 16 * w + l / 4 + (q >= 2 ? 8 : 0), hc = 8 * j + 2 * (l % 4) + (q & 1);
                  int row, col;
                  gw_acc_pos(c, w, l, j, q, &row, &col);
                  if (m0 + row < p->m && n0 + col < p->n)
                    store(e, m0 + row, n0 + col, d[r][((size_t)c * 64 + hr) * bn + hc]);
                }
      }
    }
  }
  for (int r = 0; r < CM; r++) free(ring[r]), free(d[r]);
}

/* ---- the mma.sync kernel --------------------------------------------------------------------- */
static int swz_model(int row, int chunk, int width) {
  return row * width + ((chunk ^ (row & 7)) << 3);
}

static void cp_tile(const emu *e, uint16_t *tile, const uint16_t *g, long rows, long cols, long r0,
                    long c0, int trows, int tcols) {
  for (int r = 0; r < trows; r++)
    for (int ch = 0; ch < tcols / 8; ch++) {
      int ok = r0 + r < rows && c0 + ch * 8 < cols;
      for (int i = 0; i < 8; i++)
        tile[swz_model(r, ch, tcols) + i] = ok ? g[(r0 + r) * cols + c0 + ch * 8 + i] : 0;
    }
  (void)e;
}

/* ldmatrix.x4 (trans or not): rows[l] is lane l's row address (element offset); out[l][q] the
 * two elements of register q of lane l */
static void ldmatrix(const uint16_t *smem, const int rows[32], int trans, uint16_t out[32][4][2]) {
  for (int l = 0; l < 32; l++)
    for (int q = 0; q < 4; q++)
      for (int h = 0; h < 2; h++) {
        int row = trans ? 2 * (l % 4) + h : l / 4, col = trans ? l / 4 : 2 * (l % 4) + h;
        out[l][q][h] = smem[rows[8 * q + row] + col];
      }
}

/* c[l][0..3] += a[l] · b[l] over a warp (fragments per lane) */
static void mma(const emu *e, float c[32][4], uint16_t a[32][4][2], uint16_t b[32][2][2]) {
  float A[16][16], B[16][8];
  for (int l = 0; l < 32; l++) {
    int g = l / 4, t = l % 4;
    for (int h = 0; h < 2; h++) {
      A[g][2 * t + h] = val(e, a[l][0][h]);
      A[g + 8][2 * t + h] = val(e, a[l][1][h]);
      A[g][2 * t + 8 + h] = val(e, a[l][2][h]);
      A[g + 8][2 * t + 8 + h] = val(e, a[l][3][h]);
      B[2 * t + h][g] = val(e, b[l][0][h]);
      B[2 * t + 8 + h][g] = val(e, b[l][1][h]);
    }
  }
  for (int l = 0; l < 32; l++) {
    int g = l / 4, t = l % 4;
    for (int q = 0; q < 4; q++) {
      int row = g + (q >= 2 ? 8 : 0), col = 2 * t + (q & 1);
      for (int k = 0; k < 16; k++) c[l][q] += A[row][k] * B[k][col];
    }
  }
}

static void emulate_mma(emu *e, const gemm_plan *pl) {
  const gemm_problem *p = &e->p;
  uint16_t *ring = malloc((size_t)gm_b_stage(GM_STAGES) * 2);
  static float acc[8][4][8][32][4]; /* warp, mi, ni, lane, e */
  for (int cta = 0; cta < pl->grid; cta++) {
    int mb, nb;
    gemm_tile_of(cta, pl->tiles_m, pl->tiles_n, GM_GROUP_M, &mb, &nb);
    const int m0 = mb * GM_BM, n0 = nb * GM_BN;
    memset(acc, 0, sizeof acc);
    memset(ring, 0xff, (size_t)gm_b_stage(GM_STAGES) * 2);
    for (int kb = 0; kb < pl->k_blocks; kb++) {
      int s = kb % GM_STAGES;
      uint16_t *ta = ring + gm_a_stage(s), *tb = ring + gm_b_stage(s);
      cp_tile(e, ta, e->a, p->m, p->k, m0, (long)kb * GM_BK, GM_BM, GM_BK);
      cp_tile(e, tb, e->b, p->k, p->n, (long)kb * GM_BK, n0, GM_BK, GM_BN);
      for (int w = 0; w < 8; w++) {
        int wm = w >> 2, wn = w & 3;
        for (int kk = 0; kk < GM_BK / 16; kk++) {
          uint16_t af[4][32][4][2], r[32][4][2], bf[8][32][2][2];
          int rows[32];
          for (int mi = 0; mi < 4; mi++) {
            for (int l = 0; l < 32; l++) {
              int row, chunk;
              gm_a_ldm(wm, mi, kk, l, &row, &chunk);
              rows[l] = swz_model(row, chunk, GM_BK);
            }
            ldmatrix(ta, rows, 0, af[mi]);
          }
          for (int dp = 0; dp < 4; dp++) {
            for (int l = 0; l < 32; l++) {
              int row, chunk;
              gm_b_ldm(wn, dp, kk, l, &row, &chunk);
              rows[l] = swz_model(row, chunk, GM_BN);
            }
            ldmatrix(tb, rows, 1, r);
            for (int l = 0; l < 32; l++) /* as the kernel: registers 0, 1 / 2, 3 */
              for (int h = 0; h < 2; h++) {
                bf[2 * dp][l][0][h] = r[l][0][h], bf[2 * dp][l][1][h] = r[l][1][h];
                bf[2 * dp + 1][l][0][h] = r[l][2][h], bf[2 * dp + 1][l][1][h] = r[l][3][h];
              }
          }
          for (int mi = 0; mi < 4; mi++)
            for (int ni = 0; ni < 8; ni++) mma(e, acc[w][mi][ni], af[mi], bf[ni]);
        }
      }
    }
    for (int w = 0; w < 8; w++)
      for (int mi = 0; mi < 4; mi++)
        for (int ni = 0; ni < 8; ni++)
          for (int l = 0; l < 32; l++)
            for (int q = 0; q < 4; q++) {
              int r, col;
              gm_acc_pos(w >> 2, w & 3, l, mi, ni, q, &r, &col);
              if (m0 + r < p->m && n0 + col < p->n)
                store(e, m0 + r, n0 + col, acc[w][mi][ni][l][q]);
            }
  }
  free(ring);
}

/* ---- one case ------------------------------------------------------------------------------------ */
static void run_case(int system, long m, long n, long k, gemm_dtype dt, int tile_n, int cluster,
                     int grid) {
  emu e;
  memset(&e, 0, sizeof e);
  e.p = (gemm_problem){m, n, k, dt};
  gemm_plan pl;
  char why[256];
  const gemm_device h100 = {9, 0, 132, 232448, 1024, 65536};
  if (gemm_plan_make(system, &e.p, tile_n, cluster, &h100, &pl, why, sizeof why) != 0) {
    CHECKF(0, "plan: %s", why);
    return;
  }
  if (grid) pl.grid = grid; /* fewer CTAs: more units each (the persistent loop) */
  e.a = malloc(m * k * 2);
  e.b = malloc(k * n * 2);
  e.c = malloc(m * n * 2);
  gemm_fill_host(e.a, 0, m * k, 5, GEMM_STREAM_A, dt);
  gemm_fill_host(e.b, 0, k * n, 5, GEMM_STREAM_B, dt);
  memset(e.c, 0xff, m * n * 2);
  if (system == GEMM_SYS_WGMMA)
    emulate_wgmma(&e, &pl);
  else
    emulate_mma(&e, &pl);
  double *A = malloc(m * k * sizeof *A), *B = malloc(k * n * sizeof *B),
         *C = malloc(m * n * sizeof *C);
  for (long i = 0; i < m * k; i++) A[i] = gemm_load(e.a, i, dt);
  for (long i = 0; i < k * n; i++) B[i] = gemm_load(e.b, i, dt);
  gemm_ref(A, B, C, m, n, k);
  hx_check c = gemm_compare(dt, e.c, C, m * n, k);
  CHECKF(c.ok && !e.bad_store, "%s %s %ldx%ldx%ld (%s, grid %d): rel_l2 %.2e, %zu unwritten",
         pl.impl, gemm_dtype_names[dt], m, n, k, system == GEMM_SYS_WGMMA ? "wgmma" : "mma",
         pl.grid, c.rel_l2, c.n_nonfinite);
  if (system == GEMM_SYS_WGMMA)
    CHECKF(e.smem_max <= (size_t)gw_bar_offset(pl.bn) * 2 &&
               (size_t)gw_bar_offset(pl.bn) * 2 + 2 * pl.stages * 8 + GW_ALIGN <=
                   (size_t)pl.smem_bytes,
           "wgmma ring within its %d bytes", pl.smem_bytes);
  free(A), free(B), free(C), free(e.a), free(e.b), free(e.c);
}

int main(void) {
  /* the GPU check's small shape; the 256-wide tile has an N edge there */
  run_case(GEMM_SYS_WGMMA, 256, 384, 512, GEMM_FP16, 128, 1, 0);
  run_case(GEMM_SYS_WGMMA, 256, 384, 512, GEMM_FP16, 256, 1, 0);
  /* M, N and K edges at once, bf16, and a grid of 2 CTAs walking 3 tiles each (the ring's
   * stage runs on across tiles) */
  run_case(GEMM_SYS_WGMMA, 264, 136, 72, GEMM_BF16, 128, 1, 2);
  run_case(GEMM_SYS_WGMMA, 264, 136, 72, GEMM_FP16, 256, 1, 1);
  /* clusters of 2: 3 tile rows (rank 1 of the second pair lies past M), one cluster walking
   * every unit, and an even shape */
  run_case(GEMM_SYS_WGMMA, 264, 136, 72, GEMM_FP16, 128, 2, 2);
  run_case(GEMM_SYS_WGMMA, 264, 520, 136, GEMM_BF16, 256, 2, 0);
  run_case(GEMM_SYS_WGMMA, 512, 384, 192, GEMM_FP16, 128, 2, 0);
  run_case(GEMM_SYS_MMA, 256, 384, 512, GEMM_FP16, 0, 0, 0);
  run_case(GEMM_SYS_MMA, 264, 136, 72, GEMM_BF16, 0, 0, 0);
  return check_report();
}
