/* kron_algo.c: the three versions as call sequences on a backend (kron.h), and v3's plan.
 * Derivations of every GEMM's arguments (cuBLAS is column-major; a row-major [r, c] matrix is
 * a column-major [c, r] one with leading dimension c):
 *   Y[R,f] = X[R,f]·A^T          gemm(T, N, m=f, n=R, k=f, A ld f, X ld f, Y ld f)
 *   X'[R,f] = G[R,f]·A           gemm(N, N, m=f, n=R, k=f, A ld f, G ld f, X' ld f)
 *   gA[f,f] = G[R,f]^T·X[R,f]    gemm(N, T, m=f, n=f, k=R, X ld f, G ld f, gA ld f)
 *   per slab [f,Q]: Y = A·X      gemm(N, N, m=Q, n=f, k=f, X ld Q, A ld f (stride 0), Y ld Q)
 *                   X' = A^T·G   gemm(N, T, m=Q, n=f, k=f, G ld Q, A ld f (stride 0), X' ld Q)
 *                   gA_b = G·X^T gemm(T, N, m=f, n=f, k=Q, X ld Q, G ld Q, gA_b ld f)  */
#include "kron.h"

#include "harness.h"
#include "kron_tile.h"

#include <stdarg.h>
#include <string.h>

#define AT(p, e) ((void *)((char *)(p) + (size_t)(e) * (size_t)es))

/* ---- v3's plan ---------------------------------------------------------------------------- */

const char *const kron_mt_names[KRON_NMT] = {"8x8", "4x8", "4x4", "4x4s", "8x1s", "tc"};

/* A row stride >= n, a multiple of 16 bytes, and an odd number of 16-byte chunks: rows that
 * are written column-wise (transposing loads) spread over all bank groups. */
static long long pad_ld(long long n, int es) {
  long long r = 16 / es, ld = (n + r - 1) / r * r;
  if (ld / r % 2 == 0) ld += r;
  return ld;
}

static long long round_up(long long n, long long m) { return (n + m - 1) / m * m; }

/* A row stride >= n for the tensor-core fragments (kron_tile.h): the 32 lanes of an fp32
 * fragment read 4 rows (k) of 8 consecutive elements (k-major: Bm, or A with trans) or 8 rows
 * of 4 (m-major: A forward; n-major: Bm of a transposed tile); a 16-lane half of an fp64 one
 * reads 4 x 4 either way. Conflict-free: fp32 k-major needs ld = 8 mod 16, everything else
 * ld = 4 mod 8. */
static long long tc_ld(long long n, int es, int kmajor) {
  long long q = es == 4 && kmajor ? 16 : 8, r = q / 2, ld = n;
  while (ld % q != r) ld++;
  return ld;
}

static long long stage_lda(const kron_stage *st, int l, long long f, int es, int trans) {
  return st->mt[l] == KRON_MT_TC ? tc_ld(f, es, trans) : pad_ld(f, es);
}

void kron_stage_layout(const kron_shape *s, const kron_stage *st, int es, int trans,
                       kron_stage_smem *L) {
  long long vw = 16 / es, off = 0;
  memset(L, 0, sizeof *L);
  for (int l = 0; l < st->k1 - st->k0; l++) {
    long long f = s->f[st->k0 + l];
    L->lda[l] = stage_lda(st, l, f, es, trans);
    L->a[l] = off;
    off += round_up(f * L->lda[l], vw);
  }
  L->buf_elems = round_up((st->t.tr ? st->t.V * kron_tr_rows(&st->t) : st->t.S) * st->t.ld, vw);
  /* the work buffer: between a stage's contractions (tensor-core single-axis stages store
   * their one contraction from registers) */
  int work = st->mt[0] != KRON_MT_TC || st->k1 - st->k0 > 1, nbuf = 1 + st->prefetch + work;
  L->buf[0] = off;
  L->buf[1] = st->prefetch ? off + L->buf_elems : off;
  L->buf[2] = work ? off + (nbuf - 1) * L->buf_elems : off;
  L->total = off + nbuf * L->buf_elems;
}

/* bytes of the stage's kernel: the larger of its two directions */
static size_t stage_smem(const kron_shape *s, const kron_stage *st, int es) {
  kron_stage_smem fwd, bwd;
  kron_stage_layout(s, st, es, 0, &fwd);
  kron_stage_layout(s, st, es, 1, &bwd);
  return (size_t)(fwd.total > bwd.total ? fwd.total : bwd.total) * (size_t)es;
}

long long kron_gstep_slot_elems(const kron_gstep *g) {
  return round_up((g->t.tr ? g->t.V : g->t.S) * g->t.ld, 4); /* 16 bytes for either size */
}

/* The tilings of [R, S, Q]: NB = 1 with W dividing Q, or W = Q with NB dividing R; V at most
 * vmax. */
typedef struct {
  kron_tiling t[512];
  int n;
} tilings;

static void tiling_init(kron_tiling *t, long long R, long long P, long long S, long long Q,
                        long long W, long long NB) {
  memset(t, 0, sizeof *t);
  t->P = P;
  t->S = S;
  t->Q = Q;
  t->W = W;
  t->NB = NB;
  t->V = NB * W;
  t->tiles = R / NB * (Q / W);
}

static void add_tiling(tilings *c, long long R, long long P, long long S, long long Q, long long W,
                       long long NB) {
  if (c->n == (int)(sizeof c->t / sizeof *c->t)) return;
  tiling_init(&c->t[c->n++], R, P, S, Q, W, NB);
}

static void enum_tilings(tilings *c, long long R, long long P, long long S, long long Q,
                         long long vmax) {
  c->n = 0;
  for (long long W = 1; W <= Q && W <= vmax; W++)
    if (Q % W == 0) add_tiling(c, R, P, S, Q, W, 1);
  for (long long NB = 2; NB <= R && NB * Q <= vmax; NB++)
    if (R % NB == 0) add_tiling(c, R, P, S, Q, Q, NB);
}

/* the stage's tiling fields that follow from W and NB: 16-byte loads, row stride */
static void finish_stage_tiling(kron_tiling *t, int es) {
  long long vw = 16 / es;
  t->vec = t->W % vw == 0 && t->Q % vw == 0;
  t->ld = t->V == 1 || t->vec ? t->V : pad_ld(t->V, es);
}

/* Micro-tile of the stage's axis l: the largest that still gives every thread a unit and
 * does not waste columns; element-wise columns where rows of V are not 16-byte multiples. */
static int pick_mt(const kron_shape *s, const kron_stage *st, int l, int es) {
  int vw = 16 / es, g = st->k1 - st->k0;
  kron_ctr c = kron_ctr_of(&st->t, &s->f[st->k0], g, l);
  if (st->t.V % vw || st->t.ld % vw || c.nlo < vw) return c.nlo >= 4 ? KRON_MT_4x4S : KRON_MT_8x1S;
  static const int order_f[] = {KRON_MT_8x8, KRON_MT_4x8, KRON_MT_4x4};
  static const int order_d[] = {KRON_MT_4x8, KRON_MT_4x4};
  const int *order = es == 4 ? order_f : order_d;
  int n = es == 4 ? 3 : 2;
  for (int i = 0; i < n; i++) {
    int tm = kron_mt_tm(order[i]), tn = kron_mt_tn(order[i]);
    long long units = c.H * (long long)kron_groups(c.f, tm) * kron_groups(c.nlo, tn);
    if (units >= KRON_THREADS && c.nlo >= tn && c.f >= tm) return order[i];
  }
  return KRON_MT_4x4;
}

#define KRON_TC_PAIR(WM, WN) {WM, WN},
static const int tc_stage_tiles[][2] = {KRON_TC_STAGE_TILES(KRON_TC_PAIR)};
static const int tc_grad_tiles[][2] = {KRON_TC_GRAD_TILES(KRON_TC_PAIR)};
#undef KRON_TC_PAIR
#define NTILES(list) ((int)(sizeof list / sizeof *list))

/* whether (wm, wn) is one of a kernel's instantiated warp tiles */
static int tc_tile_known(const int (*list)[2], int n, int wm, int wn) {
  for (int i = 0; i < n; i++)
    if (list[i][0] == wm && list[i][1] == wn) return 1;
  return 0;
}

/* Blocks along the rows of gA_k so that the gradient kernel's grid (every axis's output blocks
 * times its splits) is one wave: the kernel runs one block per SM, so the grid is at most the
 * SMs (a few blocks more would make a second wave; studies/kron-layer/README.md). */
static int one_wave_ksplit(const kron_shape *s, const kron_plan_cfg *cfg, int nob,
                           long long tiles) {
  if (cfg->ga_split > 0) return (int)(cfg->ga_split < tiles ? cfg->ga_split : tiles);
  long long blocks = (long long)s->m * nob * nob, want = cfg->nsm / blocks;
  if (want < 1) want = 1;
  return (int)(want < tiles ? want : tiles);
}

/* The warp tile (wm x wn mma tiles) of a tensor-core stage's M x N outputs (with `both`, also
 * N x M: the pair stage's two contractions): `forced` (wm·8 + wn, REPRO_KRON_TC_TILE) where it
 * is instantiated and divides them; else the first of KRON_TC_STAGE_TILES that divides them
 * and gives `want` warps a unit, else the one with the most units. 0, or -1: none divides. */
static int pick_stage_tile(int es, long long M, long long N, int both, int forced, int want,
                           int *wm, int *wn) {
  int best = -1, best_units = 0;
  for (int i = 0; i < NTILES(tc_stage_tiles); i++) {
    long long rows = (long long)kron_tc_mrows(es) * tc_stage_tiles[i][0],
              cols = (long long)KRON_TC_N * tc_stage_tiles[i][1];
    if (M % rows || N % cols || (both && (N % rows || M % cols))) continue;
    int units = kron_tc_units(es, (int)M, (int)N, tc_stage_tiles[i][0], tc_stage_tiles[i][1]);
    if (forced == tc_stage_tiles[i][0] * 8 + tc_stage_tiles[i][1]) {
      best = i;
      break;
    }
    int good = units >= want, best_good = best >= 0 && best_units >= want;
    if (best < 0 || (good && !best_good) || (!best_good && units > best_units))
      best = i, best_units = units;
  }
  if (best < 0) return -1;
  *wm = tc_stage_tiles[best][0];
  *wn = tc_stage_tiles[best][1];
  return 0;
}

/* Blocks of a stage's kernel that fit on an SM by shared memory (with the runtime's 1 KiB
 * reserve per block), and by its launch bounds' registers (256 threads at <= 128 each on the
 * CUDA cores; KRON_TC_STAGE_BLOCKS on the tensor cores); at least 1. */
static long long smem_blocks(const kron_plan_cfg *cfg, size_t smem) {
  return (long long)(cfg->smem_sm / (smem + 1024));
}
static long long stage_occupancy(const kron_plan_cfg *cfg, const kron_stage *st, int es) {
  long long occ = smem_blocks(cfg, st->smem);
  long long regs = st->mt[0] == KRON_MT_TC ? KRON_TC_STAGE_BLOCKS(es, st->wm, st->wn) : 2;
  if (occ > regs) occ = regs;
  return occ < 1 ? 1 : occ;
}
/* the grid: persistent blocks (the occupancy on every SM) with prefetch, else one per tile */
static int stage_grid(const kron_plan_cfg *cfg, const kron_stage *st, int es) {
  long long grid = cfg->nsm * stage_occupancy(cfg, st, es);
  return (int)(st->prefetch && grid < st->t.tiles ? grid : st->t.tiles);
}
/* tensor-core stages prefetch only when their tiles outnumber one wave of their blocks */
static int tc_prefetch(const kron_plan_cfg *cfg, const kron_stage *st, int es) {
  return st->t.tiles > (long long)cfg->nsm * KRON_TC_STAGE_BLOCKS(es, st->wm, st->wn);
}

/* A single-axis stage on the tensor cores when its factor and tile fit the mma tiles (and the
 * padded rows still fit the budget): out[a][v] = sum_b P[b][a] in[b][v] is an f x V x f GEMM.
 * The warp tile: the largest that gives half the warps a unit (fewer fragment loads and splits
 * per mma beat more busy warps: at fp32 8x64x64x64, 2x4 with 4 of 8 warps busy runs faster
 * than 1x4 with all 8; studies/kron-layer/README.md).
 * With Q = 1 (the last axis) the tile is a run of NB whole slabs: held transposed (rows v), its
 * copies are 16-byte chunks of contiguous slabs and the fragments read in[b][v] down a row. */
static void try_tc_stage(const kron_shape *s, int es, const kron_plan_cfg *cfg, kron_stage *st) {
  long long f = s->f[st->k0];
  if (st->k1 - st->k0 != 1 || f % kron_tc_mrows(es) || st->t.V % KRON_TC_N) return;
  kron_stage tc = *st;
  tc.mt[0] = KRON_MT_TC;
  if (pick_stage_tile(es, f, st->t.V, 0, cfg->tc_tile, KRON_THREADS / 64, &tc.wm, &tc.wn)) return;
  tc.prefetch = tc_prefetch(cfg, &tc, es);
  if (st->t.Q == 1) {
    tc.t.tr = 1;
    tc.t.vec = f % (16 / es) == 0;
    tc.t.ld = tc_ld(f, es, 0);
  } else {
    tc.t.ld = tc_ld(st->t.V, es, 1);
  }
  tc.smem = stage_smem(s, &tc, es);
  if (tc.smem <= cfg->smem_block) *st = tc;
}

/* The two-axis tensor-core stage of the last two axes (Q = 1): a tile is one slab of
 * f_{m-1}·f_m elements held as f_{m-1} rows of f_m (kron_tiling.rowlen, row stride 4 mod 8: the
 * n-major fragments of the second axis's contraction read it conflict-free), both factors in
 * shared memory; the block contracts the rows (the first axis: an f_{m-1} x f_m x f_{m-1}
 * GEMM, its result to a work buffer and the side output) then within the rows (the second:
 * f_m x f_{m-1} x f_m), backwards in the other order. One stage fewer than one per axis: the
 * intermediate is written once and not read back. 0, or -1: the shape does not fit it (factor
 * sizes and mma tiles, shared memory for two blocks per SM, fewer slabs than SMs). */
static int make_tc_pair(const kron_shape *s, int es, const kron_plan_cfg *cfg, kron_stage *out) {
  int m = s->m, nw = KRON_THREADS / 32;
  if (m < 2 || cfg->tc != KRON_TC_AUTO) return -1;
  long long fa = s->f[m - 2], fb = s->f[m - 1], P = kron_prefix(s, m - 2), R = s->batch * P;
  int mr = kron_tc_mrows(es), vw = 16 / es;
  if (fa % mr || fb % mr || fa % KRON_TC_N || fb % KRON_TC_N || fb % vw || R < cfg->nsm) return -1;
  kron_stage st;
  memset(&st, 0, sizeof st);
  st.k0 = m - 2;
  st.k1 = m;
  st.mt[0] = st.mt[1] = KRON_MT_TC;
  tiling_init(&st.t, R, P, fa * fb, 1, 1, 1);
  st.t.tr = 1;
  st.t.rowlen = fb;
  st.t.vec = 1;
  st.t.ld = tc_ld(fb, es, 0);
  if (pick_stage_tile(es, fa, fb, 1, cfg->tc_tile, nw / 2, &st.wm, &st.wn)) return -1;
  st.prefetch = tc_prefetch(cfg, &st, es);
  st.smem = stage_smem(s, &st, es);
  if (st.smem > cfg->smem_block || smem_blocks(cfg, st.smem) < 2) {
    st.prefetch = 0; /* one tile per block: room for two blocks per SM */
    st.smem = stage_smem(s, &st, es);
  }
  /* two blocks per SM at least: at one (fp64 64 x 64: 170 KiB) the pair stage runs slower than
   * the two single-axis stages it replaces (studies/kron-layer/README.md) */
  if (st.smem > cfg->smem_block || smem_blocks(cfg, st.smem) < 2) return -1;
  st.grid = stage_grid(cfg, &st, es);
  *out = st;
  return 0;
}

/* Stage [k0, k1): the tiling that keeps the SMs busiest (tiles of >= 4096 elements give every
 * thread a 4x4 micro-tile; >= 2 tiles per SM let blocks prefetch). 0, or -1: no tiling fits. */
static int make_stage(const kron_shape *s, int es, const kron_plan_cfg *cfg, int k0, int k1,
                      kron_stage *out) {
  long long P = kron_prefix(s, k0), Q = kron_suffix(s, k1 - 1), S = 1, R = s->batch * P;
  for (int k = k0; k < k1; k++) S *= s->f[k];
  static tilings c;
  enum_tilings(&c, R, P, S, Q, 4096);
  double best = -1;
  int found = 0, vw = 16 / es;
  for (int i = 0; i < c.n; i++) {
    kron_stage st;
    memset(&st, 0, sizeof st);
    st.k0 = k0;
    st.k1 = k1;
    st.t = c.t[i];
    st.prefetch = st.t.tiles > cfg->nsm; /* else one tile per block: nothing to prefetch */
    finish_stage_tiling(&st.t, es);
    st.smem = stage_smem(s, &st, es);
    if (st.smem > cfg->smem_block || S * st.t.V > 65536) continue;
    double E = (double)(S * st.t.V), tiles = (double)st.t.tiles;
    double util = E >= 4096 ? 1 : E / 4096,
           par = tiles >= 2.0 * cfg->nsm ? 1 : tiles / (2.0 * cfg->nsm);
    double score = util * par * (st.t.V % vw == 0 ? 1 : 0.9);
    /* ties: the larger tile (fewer loads of A per element) */
    if (found && (score < best * (1 - 1e-9) ||
                  (score <= best * (1 + 1e-9) && E <= (double)(out->t.S * out->t.V))))
      continue;
    best = score;
    *out = st;
    found = 1;
  }
  if (!found) return -1;
  for (int l = 0; l < k1 - k0; l++) out->mt[l] = pick_mt(s, out, l, es);
  if (cfg->tc == KRON_TC_AUTO) try_tc_stage(s, es, cfg, out);
  out->grid = stage_grid(cfg, out, es);
  return 0;
}

/* gA_k on the tensor cores: each output block an ob x ob x (rows) GEMM of the transposed G and
 * T tiles; the warps split into units (warp tiles of the block) times kp parts of every
 * tile's rows, the kp partial sums added in shared memory (the tiles' slots) before the
 * atomics. Only when f and the tile rows fit the mma tiles and the padded tiles fit. */
static void try_tc_gstep(const kron_shape *s, int es, const kron_plan_cfg *cfg, int k,
                         kron_gstep *g) {
  const int(*cand)[2] = tc_grad_tiles;
  int f = s->f[k], nw = KRON_THREADS / 32, ks = kron_tc_kstep(es);
  if (f % kron_tc_mrows(es)) return;
  kron_gstep tc = *g;
  tc.mt = KRON_MT_TC;
  tc.t.ld = tc_ld(f, es, 1);
  if (tc.t.Q > 1 && tc.t.W % (16 / es) == 0 && tc.t.Q % (16 / es) == 0) {
    /* the tiles as the stages hold them (rows s of V, 16-byte copies): G^T T reads A m-major
     * and B n-major from them, rows 4 mod 8 (transposing element-wise loads would dominate the
     * gradient kernel: ncu, studies/kron-layer/README.md) */
    tc.t.tr = 0;
    tc.t.vec = 1;
    tc.t.ld = tc_ld(tc.t.V, es, 0);
  }
  tc.smem = 4 * (size_t)kron_gstep_slot_elems(&tc) * (size_t)es;
  if (tc.smem > cfg->smem_block) return;
  /* output blocks of f (up to 128), else smaller ones dividing f, until a warp tile fits */
  for (int ob = f < 128 ? f : 128; ob >= kron_tc_mrows(es); ob /= 2) {
    if (f % ob) continue;
    for (int i = 0; i < NTILES(tc_grad_tiles); i++) {
      long long rows = (long long)kron_tc_mrows(es) * cand[i][0], cols = KRON_TC_N * cand[i][1];
      if (ob % rows || ob % cols) continue;
      int units = kron_tc_units(es, ob, ob, cand[i][0], cand[i][1]);
      int kp = units <= nw && nw % units == 0 ? nw / units : 0;
      if (!kp || tc.t.V % (kp * ks)) continue;
      if (kp > 1 && (long long)kp * ob * ob > 4 * kron_gstep_slot_elems(&tc)) continue;
      tc.ob = ob;
      tc.nob = f / ob;
      tc.wm = cand[i][0];
      tc.wn = cand[i][1];
      tc.kp = kp;
      tc.ksplit = one_wave_ksplit(s, cfg, tc.nob, tc.t.tiles);
      *g = tc;
      return;
    }
  }
}

/* gA_k: transposed tiles of up to 64 rows, two slots of a G and a T tile each */
static int make_gstep(const kron_shape *s, int es, const kron_plan_cfg *cfg, int k, kron_gstep *g) {
  long long P = kron_prefix(s, k), Q = kron_suffix(s, k), f = s->f[k], R = s->batch * P;
  static tilings c;
  enum_tilings(&c, R, P, f, Q, 64);
  memset(g, 0, sizeof *g);
  int found = 0;
  for (int i = 0; i < c.n; i++) {
    kron_gstep cand;
    memset(&cand, 0, sizeof cand);
    cand.t = c.t[i];
    cand.t.ld = pad_ld(f, es);
    cand.t.vec = Q == 1 && f % (16 / es) == 0;
    cand.t.tr = 1;
    cand.smem = 4 * (size_t)kron_gstep_slot_elems(&cand) * (size_t)es;
    if (cand.smem > cfg->smem_block) continue;
    if (found && cand.t.V <= g->t.V) continue;
    *g = cand;
    found = 1;
  }
  if (!found) return -1;
  g->mt = f >= 8 ? KRON_MT_8x8 : KRON_MT_4x4;
  g->ob = (int)(f < 128 ? f : 128);
  g->nob = (int)kron_groups(f, g->ob);
  long long units =
      (long long)kron_groups(g->ob, kron_mt_tm(g->mt)) * kron_groups(g->ob, kron_mt_tn(g->mt));
  g->kp = (int)(units >= KRON_THREADS ? 1 : KRON_THREADS / units);
  g->ksplit = one_wave_ksplit(s, cfg, g->nob, g->t.tiles);
  if (cfg->tc == KRON_TC_AUTO) try_tc_gstep(s, es, cfg, k, g);
  return 0;
}

/* shapes up to this many multiply-adds are small: auto fuses their whole row where it fits... */
#define KRON_FUSE_AUTO_MACS (1LL << 25)
/* ...in tiles of at most this much shared memory per block. Their few slabs then spread over
 * more blocks (16 to 64 instead of 4 to 16): with launches overlapped (PDL, CUDA graphs) a
 * small shape's time is one block's, and the largest tiles leave most SMs idle (the sweep
 * that set it: studies/kron-layer/README.md). */
#define KRON_SMALL_SMEM_BLOCK ((size_t)24 * 1024)

static int plan_make(const kron_shape *s, int es, kron_pass pass, const kron_plan_cfg *cfg,
                     kron_plan *p, char *why, size_t why_len);

/* Where v2's strided-batched cuBLAS GEMMs outrun v3's stages (measured on an H200,
 * kernels/kron/README.md "Which runs where"): when every factor is 128 or more, each axis is a
 * GEMM with k >= 128 that cuBLAS's tuned tiles run near their peak while a stage's tiles stay
 * short of it; and in the fp64 forward from factors of 32, where cuBLAS's DMMA GEMMs are
 * faster than v3's DMMA stages, while v3's backward keeps its lead through the gradient steps
 * it fuses. */
int kron_gemm_route(const kron_shape *s, int es, kron_pass pass) {
  int fmin = s->f[0];
  for (int k = 1; k < s->m; k++) fmin = s->f[k] < fmin ? s->f[k] : fmin;
  return fmin >= 128 || (es == 8 && pass == KRON_FWD && fmin >= 32);
}

/* v3's route for this plan: v2's GEMMs when asked, or on auto where they are faster and no
 * knob forces a stage plan. */
static int routes_to_gemm(const kron_shape *s, int es, kron_pass pass, const kron_plan_cfg *cfg) {
  if (cfg->route == KRON_ROUTE_GEMM) return 1;
  return cfg->route == KRON_ROUTE_AUTO && cfg->fuse == KRON_FUSE_AUTO && cfg->tc == KRON_TC_AUTO &&
         kron_gemm_route(s, es, pass);
}

int kron_plan_make(const kron_shape *s, int es, kron_pass pass, const kron_plan_cfg *cfg,
                   kron_plan *p, char *why, size_t why_len) {
  if (routes_to_gemm(s, es, pass, cfg)) {
    memset(p, 0, sizeof *p);
    p->gemm = 1;
    return 0;
  }
  if (cfg->fuse == KRON_FUSE_AUTO && kron_fwd_macs(s) <= (double)KRON_FUSE_AUTO_MACS &&
      cfg->smem_block > KRON_SMALL_SMEM_BLOCK) {
    kron_plan_cfg small = *cfg;
    small.smem_block = KRON_SMALL_SMEM_BLOCK;
    if (plan_make(s, es, pass, &small, p, why, why_len) == 0) return 0;
  }
  return plan_make(s, es, pass, cfg, p, why, why_len);
}

static int plan_make(const kron_shape *s, int es, kron_pass pass, const kron_plan_cfg *cfg,
                     kron_plan *p, char *why, size_t why_len) {
  memset(p, 0, sizeof *p);
  int m = s->m, k0 = m; /* axes [k0, m) fused into the last stage */
  kron_stage fused;
  if (cfg->fuse == KRON_FUSE_ON) {
    for (int k = 0; k < m - 1 && k0 == m; k++)
      if (make_stage(s, es, cfg, k, m, &fused) == 0) k0 = k;
  } else if (cfg->fuse == KRON_FUSE_AUTO && m > 1 &&
             kron_fwd_macs(s) <= (double)KRON_FUSE_AUTO_MACS &&
             make_stage(s, es, cfg, 0, m, &fused) == 0) {
    k0 = 0;
  } else if (cfg->fuse == KRON_FUSE_AUTO && make_tc_pair(s, es, cfg, &fused) == 0) {
    k0 = m - 2;
  }
  for (int k = 0; k < k0; k++) {
    kron_stage *st = &p->st[p->nstages++];
    if (make_stage(s, es, cfg, k, k + 1, st) != 0) {
      kron_stage one;
      memset(&one, 0, sizeof one);
      one.k0 = k;
      one.k1 = k + 1;
      one.t.S = s->f[k];
      one.t.V = one.t.NB = one.t.W = 1;
      one.prefetch = 1;
      finish_stage_tiling(&one.t, es);
      kron_stage_smem L;
      kron_stage_layout(s, &one, es, 0, &L);
      snprintf(why, why_len,
               "v3: factor %d (%d) needs %lld bytes of shared memory per block (its %dx%d matrix "
               "and three tiles of %d elements); the budget is %zu",
               k + 1, s->f[k], L.total * es, s->f[k], s->f[k], s->f[k], cfg->smem_block);
      return -1;
    }
  }
  if (k0 < m) p->st[p->nstages++] = fused;
  for (int i = 0; i < p->nstages; i++)
    if (p->st[i].smem > p->smem_max) p->smem_max = p->st[i].smem;
  if (pass == KRON_BWD) {
    p->has_grad = 1;
    for (int k = 0; k < m; k++) {
      if (make_gstep(s, es, cfg, k, &p->ga[k]) != 0) {
        snprintf(why, why_len,
                 "v3 bwd: factor %d (%d): its gradient's tiles do not fit in %zu bytes of shared "
                 "memory per block",
                 k + 1, s->f[k], cfg->smem_block);
        return -1;
      }
      if (p->ga[k].smem > p->smem_max) p->smem_max = p->ga[k].smem;
    }
  }
  return 0;
}

static size_t put(char *dst, size_t cap, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static size_t put(char *dst, size_t cap, size_t len, const char *fmt, ...) {
  if (len >= cap) return len;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(dst + len, cap - len, fmt, ap);
  va_end(ap);
  return n < 0 ? len : len + (size_t)n;
}

void kron_plan_describe(const kron_shape *s, const kron_plan *p, char *dst, size_t cap) {
  size_t len = 0;
  dst[0] = '\0';
  if (p->gemm) {
    put(dst, cap, len, "stages=0 gemm=v2 (strided-batched cuBLAS GEMMs per axis)");
    return;
  }
  len = put(dst, cap, len, "stages=%d smem_kib=%.1f", p->nstages, p->smem_max / 1024.0);
  for (int i = 0; i < p->nstages; i++) {
    const kron_stage *st = &p->st[i];
    len =
        put(dst, cap, len, " s%d=axes%d-%d,tile%lldx%lld(nb%lld,w%lld),ld%lld,tiles%lld,grid%d,mt",
            i + 1, st->k0 + 1, st->k1, st->t.S, st->t.V, st->t.NB, st->t.W, st->t.ld, st->t.tiles,
            st->grid);
    for (int l = 0; l < st->k1 - st->k0; l++)
      len = put(dst, cap, len, "%s%s", l ? "/" : "", kron_mt_names[st->mt[l]]);
    if (st->mt[0] == KRON_MT_TC) len = put(dst, cap, len, "%dx%d", st->wm, st->wn);
    if (st->t.tr) len = put(dst, cap, len, ",transposed");
    if (kron_tr_rows(&st->t) > 1) len = put(dst, cap, len, ",rows%lld", kron_tr_rows(&st->t));
    if (!st->prefetch) len = put(dst, cap, len, ",noprefetch");
  }
  if (p->has_grad)
    for (int k = 0; k < s->m; k++) {
      const kron_gstep *g = &p->ga[k];
      len = put(dst, cap, len, " gA%d=tile%lldx%lld,tiles%lld,ksplit%d,blocks%dx%d,mt%s", k + 1,
                g->t.V, g->t.S, g->t.tiles, g->ksplit, g->nob, g->nob, kron_mt_names[g->mt]);
      if (g->mt == KRON_MT_TC) len = put(dst, cap, len, "%dx%d", g->wm, g->wn);
      len = put(dst, cap, len, ",kp%d", g->kp);
    }
}

/* ---- launch-config validation (both backends, before every launch) ------------------------- */

#define FAIL(...)                    \
  do {                               \
    snprintf(why, len, __VA_ARGS__); \
    return -1;                       \
  } while (0)

static int check_tiling(const kron_tiling *t, long long R, long long P, long long S, long long Q,
                        char *why, size_t len) {
  if (t->P != P || t->S != S || t->Q != Q)
    FAIL("tiling P/S/Q %lld/%lld/%lld, expected %lld/%lld/%lld", t->P, t->S, t->Q, P, S, Q);
  if (t->W < 1 || t->NB < 1 || Q % t->W || R % t->NB || (t->NB > 1 && t->W != Q))
    FAIL("tiling W=%lld NB=%lld does not tile R=%lld Q=%lld", t->W, t->NB, R, Q);
  if (t->V != t->NB * t->W || t->tiles != R / t->NB * (Q / t->W))
    FAIL("tiling V=%lld tiles=%lld inconsistent", t->V, t->tiles);
  return 0;
}

int kron_stage_check(const kron_shape *s, const kron_stage *st, int es, char *why, size_t len) {
  int vw = 16 / es, g = st->k1 - st->k0;
  if (st->k0 < 0 || st->k1 > s->m || g < 1) FAIL("stage axes [%d, %d)", st->k0, st->k1);
  long long S = 1;
  for (int k = st->k0; k < st->k1; k++) S *= s->f[k];
  long long P = kron_prefix(s, st->k0);
  if (check_tiling(&st->t, s->batch * P, P, S, kron_suffix(s, st->k1 - 1), why, len)) return -1;
  const kron_tiling *t = &st->t;
  if (t->tr) {
    long long rowlen = kron_tr_rowlen(t), rows = t->S / rowlen;
    if (st->mt[0] != KRON_MT_TC || t->Q != 1)
      FAIL("transposed stage tiles are for tensor-core stages with Q = 1");
    if (rowlen < 1 || t->S % rowlen || rows != (g == 2 ? s->f[st->k0] : 1) ||
        (rows > 1 && (t->NB != 1 || !t->vec)))
      FAIL("transposed tile of rows of %lld for a stage of %d axes", rowlen, g);
    if (t->ld < rowlen) FAIL("row stride %lld < %lld", t->ld, rowlen);
    if (t->vec && (rowlen % vw || t->ld % vw))
      FAIL("16-byte copies of transposed tiles need rows and a row stride of multiples of %d", vw);
  } else {
    if (t->ld < t->V) FAIL("row stride %lld < V %lld", t->ld, t->V);
    if (t->vec && (t->W % vw || t->Q % vw || t->ld % vw))
      FAIL("16-byte tile copies need W, Q and the row stride multiples of %d", vw);
  }
  for (int l = 0; l < g; l++) {
    int mt = st->mt[l];
    if (mt < 0 || mt >= KRON_NMT) FAIL("micro-tile %d of axis %d", mt, st->k0 + l + 1);
    if (mt == KRON_MT_TC) {
      /* one axis: an f x V output; two (the pair stage): f_a x f_b and f_b x f_a */
      long long f = s->f[st->k0], rows = (long long)kron_tc_mrows(es) * st->wm,
                cols = (long long)KRON_TC_N * st->wn, n = g == 2 ? s->f[st->k0 + 1] : t->V;
      if (g > 2 || (g == 2 && (!t->tr || st->mt[0] != st->mt[1])))
        FAIL("tensor-core stages contract one axis, or two of a transposed tile");
      if (!tc_tile_known(tc_stage_tiles, NTILES(tc_stage_tiles), st->wm, st->wn) || f % rows ||
          n % cols || (g == 2 && (n % rows || f % cols)))
        FAIL("tensor-core warp tile %dx%d for %lld x %lld", st->wm, st->wn, f, n);
      if (t->ld % vw) FAIL("tensor-core tile rows of whole 16-byte chunks");
      if (t->NB * t->S * t->Q >= (1LL << 31)) FAIL("tensor-core tile spans beyond int offsets");
      continue;
    }
    if (kron_mt_colvec(mt) && (t->V % vw || t->ld % vw))
      FAIL("micro-tile %s needs rows of whole 16-byte chunks", kron_mt_names[mt]);
    if (es == 8 && mt == KRON_MT_8x8) FAIL("micro-tile 8x8 is fp32 only");
  }
  if (st->smem != stage_smem(s, st, es)) FAIL("shared memory %zu != layout", st->smem);
  if (st->smem / (size_t)es > (1LL << 30)) FAIL("shared memory beyond int offsets");
  if (st->grid < 1 || st->grid > t->tiles) FAIL("grid %d for %lld tiles", st->grid, t->tiles);
  if (!st->prefetch && st->grid != t->tiles)
    FAIL("a stage without prefetch runs one tile per block: grid %d, %lld tiles", st->grid,
         t->tiles);
  return 0;
}

int kron_gstep_check(const kron_shape *s, int k, const kron_gstep *g, int es, char *why,
                     size_t len) {
  int vw = 16 / es;
  long long P = kron_prefix(s, k), f = s->f[k];
  if (check_tiling(&g->t, s->batch * P, P, f, kron_suffix(s, k), why, len)) return -1;
  if (g->t.ld < (g->t.tr ? f : g->t.V) || g->t.ld % vw)
    FAIL("gradient row stride %lld for f=%lld V=%lld", g->t.ld, f, g->t.V);
  if (g->t.tr && g->t.vec && (g->t.Q != 1 || f % vw))
    FAIL("16-byte copies of transposed gradient tiles need Q = 1");
  if (!g->t.tr && (g->mt != KRON_MT_TC || !g->t.vec || g->t.W % vw || g->t.Q % vw))
    FAIL("untransposed gradient tiles are the tensor cores', in 16-byte copies");
  if (g->mt == KRON_MT_TC) {
    int nw = KRON_THREADS / 32, mr = kron_tc_mrows(es);
    if (!tc_tile_known(tc_grad_tiles, NTILES(tc_grad_tiles), g->wm, g->wn) ||
        g->ob % (mr * g->wm) || g->ob % (KRON_TC_N * g->wn) || f % g->ob ||
        (long long)g->nob * g->ob != f)
      FAIL("tensor-core gradient tile %dx%d for ob=%d f=%lld", g->wm, g->wn, g->ob, f);
    int units = kron_tc_units(es, g->ob, g->ob, g->wm, g->wn);
    if (units * g->kp != nw || g->t.V % ((long long)g->kp * kron_tc_kstep(es)))
      FAIL("tensor-core gradient split: %d units x kp %d, %lld rows", units, g->kp, g->t.V);
    if (g->kp > 1 && (long long)g->kp * g->ob * g->ob > 4 * kron_gstep_slot_elems(g))
      FAIL("tensor-core gradient partials do not fit the tiles' shared memory");
  } else if (g->mt != KRON_MT_8x8 && g->mt != KRON_MT_4x4) {
    FAIL("gradient micro-tile %d", g->mt);
  }
  long long units = g->mt == KRON_MT_TC ? KRON_THREADS / 32 / g->kp
                                        : (long long)kron_groups(g->ob, kron_mt_tm(g->mt)) *
                                              kron_groups(g->ob, kron_mt_tn(g->mt));
  if (g->ob < 1 || (long long)g->nob * g->ob < f || g->kp < 1 || units * g->kp > KRON_THREADS)
    FAIL("gradient blocks ob=%d nob=%d kp=%d (%lld units)", g->ob, g->nob, g->kp, units);
  if (g->ksplit < 1 || g->ksplit > g->t.tiles)
    FAIL("ksplit %d for %lld tiles", g->ksplit, g->t.tiles);
  if (g->smem != 4 * (size_t)kron_gstep_slot_elems(g) * (size_t)es) FAIL("gradient shared memory");
  return 0;
}

#undef FAIL

void kron_ws_elems(const kron_shape *s, kron_version v, const kron_plan *fwd_plan,
                   const kron_plan *bwd_plan, long long *saved, long long *scratch,
                   long long *part) {
  long long bn = s->batch * s->n;
  *saved = (s->m - 1) * bn;
  *part = 0;
  if (v == KRON_V3 && (fwd_plan->gemm || bwd_plan->gemm)) {
    kron_ws_elems(s, KRON_V2, fwd_plan, bwd_plan, saved, scratch, part); /* v2's calls run */
    if (*scratch < (s->m - 1) * bn) *scratch = (s->m - 1) * bn;
    return;
  }
  if (v == KRON_V3) {
    *scratch = (s->m - 1) * bn; /* G_1..G_{m-1} */
    return;
  }
  *scratch = 2 * bn;
  if (v == KRON_V2)
    for (int k = 0; k < s->m; k++) {
      long long bp = s->batch * kron_prefix(s, k), Q = kron_suffix(s, k), f = s->f[k];
      if (Q > 1 && bp > 1 && bp * f * f > *part) *part = bp * f * f;
    }
}

static void name_of(char *dst, size_t cap, const char *v, const char *what, int k) {
  snprintf(dst, cap, "%s.%s[%d]", v, what, k + 1);
}

const void *kron_factor(const kron_bufs *b, const kron_shape *s, int es, int k) {
  return b->Ak[k] ? b->Ak[k] : (const void *)((const char *)b->A + (size_t)s->aoff[k] * (size_t)es);
}

/* every factor's place, for v3's stages */
static void factor_ptrs(const kron_bufs *b, const kron_shape *s, int es, const void **Ak) {
  for (int k = 0; k < s->m; k++) Ak[k] = kron_factor(b, s, es, k);
}

void kron_run_fwd(kron_be *be, kron_version v, const kron_shape *s, const kron_plan *plan,
                  const kron_bufs *b) {
  int es = be->es, m = s->m;
  long long bn = s->batch * s->n;
  char nm[64];
  if (v == KRON_V3 && plan->gemm) v = KRON_V2; /* v3 routed to v2's GEMMs (kron_gemm_route) */
  if (v == KRON_V1) {
    const void *cur = b->x;
    for (int st = 0; st < m; st++) {
      int k = m - 1 - st;
      long long f = s->f[k], R = bn / f;
      name_of(nm, sizeof nm, "v1", "gemm", k);
      be->gemm(be, nm, 1, 0, f, R, f, kron_factor(b, s, es, k), f, 0, cur, f, 0, b->scratch, f, 0,
               1);
      void *dst = st == m - 1 ? b->y : AT(b->saved, st * bn);
      name_of(nm, sizeof nm, "v1", "permute", k);
      be->transpose(be, nm, b->scratch, dst, s->batch, s->n / f, f);
      cur = dst;
    }
  } else if (v == KRON_V2) {
    const void *cur = b->x;
    for (int k = 0; k < m; k++) {
      long long f = s->f[k], bp = s->batch * kron_prefix(s, k), Q = kron_suffix(s, k);
      void *dst = k == m - 1 ? b->y : AT(b->saved, k * bn);
      const void *A = kron_factor(b, s, es, k);
      name_of(nm, sizeof nm, "v2", "gemm", k);
      if (Q == 1)
        be->gemm(be, nm, 1, 0, f, bp, f, A, f, 0, cur, f, 0, dst, f, 0, 1);
      else
        be->gemm(be, nm, 0, 0, Q, f, f, cur, Q, f * Q, A, f, 0, dst, Q, f * Q, bp);
      cur = dst;
    }
  } else {
    /* T_k (the input of axis k, 0-based) is x for k = 0, else saved[k-1]; y after axis m-1 */
    const void *Ak[KRON_MAX_FACTORS];
    factor_ptrs(b, s, es, Ak);
    for (int i = 0; i < plan->nstages; i++) {
      const kron_stage *st = &plan->st[i];
      void *side[KRON_MAX_FACTORS] = {0};
      for (int j = 0; j + 1 < st->k1 - st->k0; j++) side[j] = AT(b->saved, (st->k0 + j) * bn);
      const void *in = st->k0 ? AT(b->saved, (st->k0 - 1) * bn) : b->x;
      void *out = st->k1 == m ? b->y : AT(b->saved, (st->k1 - 1) * bn);
      snprintf(nm, sizeof nm, "v3.stage[%d-%d]", st->k0 + 1, st->k1);
      be->stage(be, nm, s, st, 0, Ak, in, out, side);
    }
  }
}

void kron_run_bwd(kron_be *be, kron_version v, const kron_shape *s, const kron_plan *fwd_plan,
                  const kron_plan *bwd_plan, const kron_bufs *b) {
  int es = be->es, m = s->m;
  long long bn = s->batch * s->n;
  char nm[64];
  (void)fwd_plan;
  if (v == KRON_V3 && bwd_plan->gemm) v = KRON_V2; /* v3 routed to v2's GEMMs (kron_gemm_route) */
  if (v == KRON_V1) {
    const void *g = b->gy;
    for (int st = m - 1; st >= 0; st--) {
      int k = m - 1 - st;
      long long f = s->f[k], R = bn / f;
      const void *X = st ? AT(b->saved, (st - 1) * bn) : b->x;
      name_of(nm, sizeof nm, "v1", "unpermute", k);
      be->transpose(be, nm, g, b->scratch, s->batch, f, s->n / f);
      name_of(nm, sizeof nm, "v1", "gemm_gA", k);
      be->gemm(be, nm, 0, 1, f, f, R, X, f, 0, b->scratch, f, 0, AT(b->gA, s->aoff[k]), f, 0, 1);
      void *dst = st == 0 ? b->gx : AT(b->scratch, bn);
      name_of(nm, sizeof nm, "v1", "gemm_gx", k);
      be->gemm(be, nm, 0, 0, f, R, f, kron_factor(b, s, es, k), f, 0, b->scratch, f, 0, dst, f, 0,
               1);
      g = dst;
    }
  } else if (v == KRON_V2) {
    const void *g = b->gy;
    for (int k = m - 1; k >= 0; k--) {
      long long f = s->f[k], bp = s->batch * kron_prefix(s, k), Q = kron_suffix(s, k);
      const void *t = k ? AT(b->saved, (k - 1) * bn) : b->x;
      const void *A = kron_factor(b, s, es, k);
      void *ga = AT(b->gA, s->aoff[k]);
      name_of(nm, sizeof nm, "v2", "gemm_gA", k);
      if (Q == 1) {
        be->gemm(be, nm, 0, 1, f, f, bp, t, f, 0, g, f, 0, ga, f, 0, 1);
      } else if (bp == 1) {
        be->gemm(be, nm, 1, 0, f, f, Q, t, Q, 0, g, Q, 0, ga, f, 0, 1);
      } else {
        be->gemm(be, nm, 1, 0, f, f, Q, t, Q, f * Q, g, Q, f * Q, b->part, f, f * f, bp);
        name_of(nm, sizeof nm, "v2", "reduce_gA", k);
        be->reduce(be, nm, b->part, bp, f * f, ga);
      }
      void *dst = k == 0 ? b->gx : AT(b->scratch, (k % 2) * bn);
      name_of(nm, sizeof nm, "v2", "gemm_gx", k);
      if (Q == 1)
        be->gemm(be, nm, 0, 0, f, bp, f, A, f, 0, g, f, 0, dst, f, 0, 1);
      else
        be->gemm(be, nm, 0, 1, Q, f, f, g, Q, f * Q, A, f, 0, dst, Q, f * Q, bp);
      g = dst;
    }
  } else {
    /* G at axis k's output: gy for k = m-1, else scratch[k]; gx after axis 0. Stages backwards,
     * each applying its axes last to first with A^T, then every gA_k in one kernel (gA zeroed
     * first, so that the gradient kernel follows the last stage directly). */
    const kron_plan *p = bwd_plan;
    const void *Ak[KRON_MAX_FACTORS];
    factor_ptrs(b, s, es, Ak);
    be->zero(be, b->gA, s->aoff[m]);
    for (int i = p->nstages - 1; i >= 0; i--) {
      const kron_stage *st = &p->st[i];
      void *side[KRON_MAX_FACTORS] = {0};
      for (int j = 0; j + 1 < st->k1 - st->k0; j++) side[j] = AT(b->scratch, (st->k1 - 2 - j) * bn);
      const void *in = st->k1 == m ? b->gy : AT(b->scratch, (st->k1 - 1) * bn);
      void *out = st->k0 ? AT(b->scratch, (st->k0 - 1) * bn) : b->gx;
      snprintf(nm, sizeof nm, "v3.gx[%d-%d]", st->k0 + 1, st->k1);
      be->stage(be, nm, s, st, 1, Ak, in, out, side);
    }
    const void *G[KRON_MAX_FACTORS], *T[KRON_MAX_FACTORS];
    for (int k = 0; k < m; k++) {
      G[k] = k == m - 1 ? b->gy : AT(b->scratch, k * bn);
      T[k] = k ? AT(b->saved, (k - 1) * bn) : b->x;
    }
    be->grad(be, "v3.gA", s, p, G, T, b->gA);
  }
}
